import { describe, expect, it } from 'vitest'
import { handleChat } from './chat.ts'
import { type MockCall, MockContext } from './context.ts'
import { type Fault, FaultQueue } from './faults.ts'
import { readMockRequest, toResponse } from './request.ts'

const rateLimit: Fault = { kind: 'rate-limit', retryAfterMs: 1500 }
const overloaded: Fault = { kind: 'overloaded' }
const cut: Fault = { kind: 'stream-cut', afterFrames: 3 }

/** A Chat Completions request as the SDK posts it. */
const post = (body: string) =>
  new Request('https://api.openai.com/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })
const valid = JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] })

describe('FaultQueue', () => {
  it('hands faults out first in, first out, one per take, then nothing', () => {
    const queue = new FaultQueue()
    queue.push(rateLimit)
    queue.push(overloaded, cut)
    expect(queue.pending).toBe(3)
    expect([queue.take(), queue.take(), queue.take(), queue.take()]).toEqual([
      rateLimit,
      overloaded,
      cut,
      undefined,
    ])
    expect(queue.pending).toBe(0)
  })

  it('hands out the very fault objects it was given, with no matching on kind', () => {
    const queue = new FaultQueue()
    queue.push(cut, rateLimit)
    expect(queue.take()).toBe(cut)
    expect(queue.take()).toBe(rateLimit)
  })

  it('starts empty, and takes nothing from an empty queue', () => {
    const queue = new FaultQueue()
    expect(queue.pending).toBe(0)
    expect(queue.take()).toBeUndefined()
    expect(queue.pending).toBe(0)
  })

  it('shows the next fault on peek without taking it', () => {
    const queue = new FaultQueue()
    expect(queue.peek()).toBeUndefined()
    queue.push(cut, rateLimit)
    expect([queue.peek(), queue.peek()]).toEqual([cut, cut])
    expect(queue.pending).toBe(2)
    expect(queue.take()).toBe(cut)
    expect(queue.peek()).toBe(rateLimit)
  })

  it('drops every pending fault on clear and keeps working after', () => {
    const queue = new FaultQueue()
    queue.push(rateLimit, overloaded)
    queue.clear()
    expect(queue.pending).toBe(0)
    expect(queue.take()).toBeUndefined()
    queue.push(cut)
    expect(queue.take()).toBe(cut)
  })

  it('allows the same fault to be queued twice, for two requests', () => {
    const queue = new FaultQueue()
    queue.push(overloaded, overloaded)
    expect([queue.take(), queue.take(), queue.take()]).toEqual([overloaded, overloaded, undefined])
  })
})

describe('faults in a mock context', () => {
  const statuses = async (bodies: string[], context: MockContext) => {
    const seen: number[] = []
    for (const body of bodies) seen.push((await handleChat('openai', post(body), context)).status)
    return seen
  }

  it('are taken one per accepted request, in the order queued', async () => {
    const context = new MockContext()
    context.faults.push(rateLimit, overloaded)
    expect(await statuses([valid, valid, valid], context)).toEqual([429, 503, 200])
    expect(context.faults.pending).toBe(0)
  })

  it('are never taken while a request is parsed, valid or not', async () => {
    const context = new MockContext()
    context.faults.push(rateLimit)
    expect(await readMockRequest(post('{not json'), context)).toHaveProperty('problem')
    expect(await readMockRequest(post(valid), context)).not.toHaveProperty('fault')
    expect(context.faults.pending).toBe(1)
  })

  it('are left for the next accepted request by requests the handler rejects', async () => {
    const context = new MockContext()
    context.faults.push(rateLimit)
    const empty = JSON.stringify({ model: 'gpt-5.4', messages: [] })
    const modelless = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })
    expect(await statuses(['{not json', empty, modelless, valid, valid], context)).toEqual([
      400, 400, 400, 429, 200,
    ])
  })

  it('fail an accepted request before simulation, as the API refuses it before processing it', async () => {
    const context = new MockContext()
    const calls: MockCall[] = []
    context.observer = (call) => calls.push(call)
    context.faults.push(overloaded)
    expect(await statuses([valid], context)).toEqual([503])
    expect(calls).toEqual([expect.objectContaining({ api: 'openai-chat', status: 503 })])
    expect(calls[0]).not.toHaveProperty('simulation')
  })

  it('inside a stream, are left for the next request by a request the simulator rejects', async () => {
    const context = new MockContext()
    context.faults.push({ kind: 'stream-cut', afterFrames: 1 })
    const streamed = (extra: object) => post(JSON.stringify({ ...JSON.parse(valid), stream: true, ...extra }))
    const refused = await handleChat('openai', streamed({ prompt_cache_retention: 'someday' }), context)
    expect(refused.status).toBe(400)
    expect(context.faults.pending).toBe(1)
    const cut = toResponse(await handleChat('openai', streamed({}), context))
    expect(cut.status).toBe(200)
    await expect(cut.text()).rejects.toThrow()
    expect(context.faults.pending).toBe(0)
  })

  it('are forgotten when the context is reset, like a fresh account', () => {
    const context = new MockContext()
    context.faults.push(rateLimit, cut)
    context.reset()
    expect(context.faults.pending).toBe(0)
  })
})

describe('a fault schedule in a mock context', () => {
  /** A Chat Completions request to `vendor`, in `session` when given, with extra headers. */
  const ask = async (
    context: MockContext,
    options: { session?: string; vendor?: 'openai' | 'deepseek'; headers?: Record<string, string> } = {},
  ) => {
    const request = new Request('https://api.openai.com/v1/chat/completions', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(options.session !== undefined ? { 'x-cachelab-session': options.session } : {}),
        ...options.headers,
      },
      body: valid,
    })
    return (await handleChat(options.vendor ?? 'openai', request, context)).status
  }
  const run = async (context: MockContext, count: number) => {
    const seen: number[] = []
    for (let index = 0; index < count; index += 1) seen.push(await ask(context))
    return seen
  }

  it('fails the n-th request overall, a retry counting as a request', async () => {
    const context = new MockContext({ faults: [{ request: 2, fault: rateLimit }] })
    expect(await run(context, 3)).toEqual([200, 429, 200])
  })

  it("with session '*', applies the rule to every session on its own, times counting per session", async () => {
    const nth = new MockContext({
      faults: [{ session: '*', sessionRequest: 1, fault: { kind: 'server-error' } }],
    })
    const seen = []
    for (const session of ['a', 'a', 'b', 'b', 'a']) seen.push(await ask(nth, { session }))
    expect(seen).toEqual([500, 200, 500, 200, 200])
    const twice = new MockContext({ faults: [{ session: '*', fault: { kind: 'server-error' }, times: 2 }] })
    const statuses = []
    for (const session of ['a', 'a', 'a', 'b', 'b', 'b']) statuses.push(await ask(twice, { session }))
    expect(statuses).toEqual([500, 500, 200, 500, 500, 200])
  })

  it('without a session, counts its times over all requests', async () => {
    const context = new MockContext({ faults: [{ fault: { kind: 'server-error' } }] })
    const seen = []
    for (const session of ['a', 'b', 'a']) seen.push(await ask(context, { session }))
    expect(seen).toEqual([500, 200, 200])
  })

  it('matches a named session and a provider, and nothing else', async () => {
    const context = new MockContext({ faults: [{ session: 'b', provider: 'deepseek', fault: overloaded }] })
    expect(await ask(context, { session: 'b', vendor: 'openai' })).toBe(200)
    expect(await ask(context, { session: 'a', vendor: 'deepseek' })).toBe(200)
    expect(await ask(context, { vendor: 'deepseek' })).toBe(200)
    expect(await ask(context, { session: 'b', vendor: 'deepseek' })).toBe(503)
    expect(context.schedule.spent).toBe(1)
  })

  it('tries rules in order, each failing as many requests as its times', async () => {
    const context = new MockContext({
      faults: [{ fault: rateLimit, times: 2 }, { fault: { kind: 'server-error' } }],
    })
    expect(await run(context, 4)).toEqual([429, 429, 500, 200])
  })

  it('puts the header before the queue and the queue before the schedule, counting every request', async () => {
    const context = new MockContext({ faults: [{ request: 3, fault: { kind: 'server-error' } }] })
    context.faults.push(overloaded)
    expect(await ask(context, { headers: { 'x-cachelab-fault': '429' } })).toBe(429)
    expect(await run(context, 3)).toEqual([503, 500, 200])
  })

  it('fails a request with a fault header and its retries times in all, serves the next, then starts over', async () => {
    const context = new MockContext()
    const headers = { 'x-cachelab-fault': '429;retry-after-ms=10;times=2' }
    const seen = []
    for (let index = 0; index < 4; index += 1) seen.push(await ask(context, { headers }))
    expect(seen).toEqual([429, 429, 200, 429])
    expect(await ask(context, { headers: { 'x-cachelab-fault': 'crash' } })).toBe(400)
  })

  it('sends exactly the retry headers a rate limit names', async () => {
    const context = new MockContext()
    const headersOf = async (fault: string) => {
      const request = new Request('https://api.openai.com/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-cachelab-fault': fault },
        body: valid,
      })
      const response = toResponse(await handleChat('openai', request, context))
      return [response.headers.get('retry-after-ms'), response.headers.get('retry-after')]
    }
    expect(await headersOf('429;retry-after-ms=10')).toEqual(['10', null])
    expect(await headersOf('429;retry-after=2')).toEqual([null, '2'])
    expect(await headersOf('429;retry-after=2;retry-after-ms=1500')).toEqual(['1500', '2'])
    expect(await headersOf('429')).toEqual([null, null])
  })

  it('keeps a fault inside the answer for a later request when the simulator refuses the first', async () => {
    const context = new MockContext({ faults: [{ fault: cut }] })
    const streamed = (extra: object) => post(JSON.stringify({ ...JSON.parse(valid), stream: true, ...extra }))
    const refused = await handleChat('openai', streamed({ prompt_cache_retention: 'someday' }), context)
    expect(refused.status).toBe(400)
    expect(context.schedule.spent).toBe(0)
    const failed = toResponse(await handleChat('openai', streamed({}), context))
    await expect(failed.text()).rejects.toThrow()
    expect(context.schedule.spent).toBe(1)
  })

  it('answers a request that is not streamed with a 500 for a fault inside the answer, after simulating it', async () => {
    const context = new MockContext({ faults: [{ fault: { kind: 'stream-error' } }] })
    const calls: MockCall[] = []
    context.observer = (call) => calls.push(call)
    expect(await run(context, 1)).toEqual([500])
    expect(calls).toEqual([
      expect.objectContaining({
        status: 500,
        failure: 'error event in the stream',
        simulation: expect.anything(),
      }),
    ])
  })

  it('starts over from its rules when the context is reset', async () => {
    const context = new MockContext({ faults: [{ request: 1, fault: rateLimit }] })
    expect(await run(context, 2)).toEqual([429, 200])
    context.reset()
    expect(await run(context, 2)).toEqual([429, 200])
  })

  it('refuses a bad rule when the context is made', () => {
    expect(() => new MockContext({ faults: [{ fault: { kind: 'rate-limit', retryAfterMs: -1 } }] })).toThrow(
      /^faults: rule 1: fault.retryAfterMs must be a whole number of milliseconds, not -1$/,
    )
  })
})

describe('the virtual clock of a mock context', () => {
  it('adds every advance to the clock, and never runs backwards', () => {
    const readings = [10, 5, 5]
    const context = new MockContext({ clock: () => readings.shift() ?? 0 })
    expect(context.now()).toBe(10)
    expect(context.now()).toBe(10)
    context.advance(360)
    expect(context.now()).toBe(365)
    expect(context.advanced).toBe(360)
  })

  it('refuses to move back or by a non-number, and keeps its time on reset', () => {
    const context = new MockContext()
    context.advance(60)
    for (const seconds of [-1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => context.advance(seconds)).toThrow(/the clock only moves forward/)
    context.reset()
    expect(context.now()).toBe(60)
  })

  it('times a request with no time header by the clock, and one with the header by the header', async () => {
    const context = new MockContext()
    context.advance(360)
    expect((await readMockRequest(post(valid), context)) as { at: number }).toMatchObject({ at: 360 })
    const timed = new Request('https://api.openai.com/v1/chat/completions', {
      method: 'POST',
      headers: { 'x-cachelab-at': '12' },
      body: valid,
    })
    expect(await readMockRequest(timed, context)).toMatchObject({ at: 12 })
    expect(context.now()).toBe(360)
  })
})
