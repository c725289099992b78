import { getResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import { DEFAULT_BASE_URLS } from '../endpoints.ts'
import { MockContext } from './context.ts'
import { HandlerTable, writtenAnswer } from './dispatch.ts'
import { mockHandlers } from './handlers.ts'
import { type MockAnswer, toResponse } from './request.ts'

/** Status, headers and body bytes of what the loopback would write of an answer (text as UTF-8, as it sends it). */
async function wire(answer: Response | MockAnswer) {
  const { status, headers, body } = writtenAnswer(answer)
  const bytes =
    body === null
      ? ''
      : typeof body === 'string'
        ? Buffer.from(body, 'utf8').toString('hex')
        : Buffer.from(await new Response(body).arrayBuffer()).toString('hex')
  return { status, headers: [...headers], bytes }
}

/** A stream of frames, as the SSE handlers build them. */
const frames = (...texts: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const text of texts) controller.enqueue(new TextEncoder().encode(text))
      controller.close()
    },
  })

/** The outcome of a call: its value, or the error it threw. */
async function outcome<T>(call: () => Promise<T>): Promise<{ value: T } | { error: string }> {
  try {
    return { value: await call() }
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` }
  }
}

describe('an answer the loopback writes without a Response', () => {
  const answers: (() => MockAnswer)[] = [
    () => ({
      status: 200,
      headers: { 'content-type': 'application/json', 'X-Request-Id': 'a' },
      body: '{"a":1}',
    }),
    () => ({ status: 429, headers: { 'retry-after': '2', 'content-type': 'application/json' }, body: '' }),
    () => ({ status: 200, headers: {}, body: 'plain text, no content type' }),
    () => ({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: frames('data: 1\n\n', 'data: 2\n\n'),
    }),
    () => ({ status: 200, headers: {}, body: frames('no type') }),
    () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '"\ud800 lone"' }),
    () => ({ status: 204, headers: {}, body: 'a body where none may be' }),
    () => ({ status: 199, headers: {}, body: '' }),
    () => ({ status: 600, headers: {}, body: '' }),
  ]

  it.each(answers.map((make, index) => [index, make]))(
    '%i is what its Response gives, or refused alike',
    async (_, make) => {
      const direct = await outcome(() => wire(make()))
      const through = await outcome(async () => wire(toResponse(make())))
      expect(direct).toEqual(through)
    },
  )
})

describe('a handler table', () => {
  const request = (path: string, method = 'GET') =>
    new Request(`${DEFAULT_BASE_URLS.openai}${path}`, { method })

  it('answers as MSW does, from the first request of a path on and from memory after', async () => {
    const context = new MockContext()
    const handlers = mockHandlers(context)
    const table = new HandlerTable(handlers)
    expect(table.direct).toBe(true)
    for (const path of [
      '/models',
      '/models/gpt-5.4',
      '/MODELS/gpt-5.4/',
      '/models/nowhere?x=1',
      '/models/a%2Fb',
      '/nothing',
    ])
      for (const round of [1, 2]) {
        const direct = await table.respond(request(path))
        const msw = await getResponse(handlers, request(path))
        const text = async (answer: Response | MockAnswer | undefined) =>
          answer === undefined ? undefined : await wire(answer)
        expect(await text(direct), `${path} ${round}`).toEqual(await text(msw))
      }
  })

  it('throws what MSW throws for a parameter that does not decode, every time', async () => {
    const handlers = mockHandlers(new MockContext())
    const table = new HandlerTable(handlers)
    const msw = await outcome(() => getResponse(handlers, request('/models/%E0%A4%A')))
    expect(msw).toEqual({ error: 'URIError: URI malformed' })
    for (const _ of [1, 2])
      expect(await outcome(() => table.respond(request('/models/%E0%A4%A')))).toEqual(msw)
  })

  it('goes through MSW for handlers that are not the mocks’ own, or when asked to', async () => {
    const context = new MockContext()
    const handlers = mockHandlers(context)
    expect(new HandlerTable(handlers, { direct: false }).direct).toBe(false)
    const { http, HttpResponse } = await import('msw')
    const foreign = new HandlerTable([
      http.get(`${DEFAULT_BASE_URLS.openai}/models`, () => HttpResponse.text('mine')),
    ])
    expect(foreign.direct).toBe(false)
    const answer = await foreign.respond(request('/models'))
    expect(answer instanceof Response ? await answer.text() : undefined).toBe('mine')
  })
})
