import { setupServer } from 'msw/node'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import { DEFAULT_BASE_URLS } from '../endpoints.ts'
import { CacheSimulators } from '../sim/index.ts'
import type { CapturedExchange } from '../wire/exchange.ts'
import { ItemReuse } from '../wire/item-reuse.ts'
import { MockContext } from './context.ts'
import { mockHandlers } from './handlers.ts'
import { type LoopbackServer, type ServeLogRecord, startLoopback } from './loopback.ts'
import { TIME_HEADER } from './script.ts'

/** What one server gave: the answers as sent, the captured exchanges and the log, clock fields left out. */
interface Served {
  answers: string[]
  exchanges: unknown[]
  log: unknown[]
  reused: number
  repeated: number
}

/** One request of the traffic: where it goes, its session and body. */
interface Sent {
  path: string
  session: string
  body: unknown
}

const system = fillerText(1500, 'reuse-system')
const turns = (seed: string, count: number) =>
  Array.from({ length: count }, (_, index) => `${seed} turn ${index}: ${fillerText(120, `${seed}-${index}`)}`)

/**
 * Growing sessions on every wire, then the cases where equal-looking items are not equal: a history
 * edited in the middle, the same text at another index, keys in another order, a string that became a
 * block, and a number that differs only as JSON (`1` and `1.5`), plus a sibling session sharing the system.
 */
function traffic(): Sent[] {
  const sent: Sent[] = []
  const chat: unknown[] = [{ role: 'system', content: system }]
  for (const [index, text] of turns('chat', 4).entries()) {
    chat.push({ role: 'user', content: text })
    sent.push({
      path: '/openai/v1/chat/completions',
      session: 'chat',
      body: { model: 'gpt-5.4', messages: [...chat] },
    })
    chat.push({ role: 'assistant', content: `answer ${index}` })
  }
  const edited = structuredClone(chat) as { role: string; content: string }[]
  ;(edited[1] as { content: string }).content = `${(edited[1] as { content: string }).content} (edited)`
  sent.push({
    path: '/openai/v1/chat/completions',
    session: 'chat',
    body: { model: 'gpt-5.4', messages: edited },
  })
  // One character changed in the middle: the same length and the same ends.
  const retyped = structuredClone(chat) as { role: string; content: string }[]
  const first = (retyped[1] as { content: string }).content
  const middle = Math.floor(first.length / 2)
  ;(retyped[1] as { content: string }).content =
    `${first.slice(0, middle)}${first[middle] === 'x' ? 'y' : 'x'}${first.slice(middle + 1)}`
  sent.push({
    path: '/openai/v1/chat/completions',
    session: 'chat',
    body: { model: 'gpt-5.4', messages: retyped },
  })
  // The first user message again, one index later; the assistant's keys in the other order.
  sent.push({
    path: '/openai/v1/chat/completions',
    session: 'chat',
    body: {
      model: 'gpt-5.4',
      messages: [chat[0], { content: 'answer 0', role: 'assistant' }, chat[1], chat[1]],
    },
  })
  // A string that became a text block with the same text, and a tool argument of another number.
  const blocks = structuredClone(chat) as { role: string; content: unknown }[]
  ;(blocks[1] as { content: unknown }).content = [
    { type: 'text', text: (chat[1] as { content: string }).content },
  ]
  sent.push({
    path: '/openai/v1/chat/completions',
    session: 'chat',
    body: { model: 'gpt-5.4', messages: blocks },
  })
  for (const temperature of [1, 1.5])
    sent.push({
      path: '/openai/v1/chat/completions',
      session: 'chat-tools',
      body: {
        model: 'gpt-5.4',
        temperature,
        messages: [
          chat[0],
          { role: 'user', content: 'call it' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'f', arguments: `{"x":${temperature}}` } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: `result ${temperature}` },
        ],
      },
    })
  sent.push({
    path: '/openai/v1/chat/completions',
    session: 'sibling',
    body: {
      model: 'gpt-5.4',
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: 'hi' },
      ],
    },
  })

  const anthropic: unknown[] = []
  for (const [index, text] of turns('anthropic', 4).entries()) {
    anthropic.push({ role: 'user', content: [{ type: 'text', text, cache_control: { type: 'ephemeral' } }] })
    sent.push({
      path: '/anthropic/v1/messages',
      session: 'anthropic',
      body: { model: 'claude-sonnet-4-6', max_tokens: 64, system, messages: [...anthropic] },
    })
    // The client moves its marker on: the previous message is sent again without it.
    anthropic[anthropic.length - 1] = { role: 'user', content: [{ type: 'text', text }] }
    anthropic.push({ role: 'assistant', content: `answer ${index}` })
  }

  const input: unknown[] = []
  for (const [index, text] of turns('responses', 3).entries()) {
    input.push({ role: 'user', content: text })
    sent.push({
      path: '/openai/v1/responses',
      session: 'responses',
      body: { model: 'gpt-5.4', instructions: system, input: [...input] },
    })
    input.push({ role: 'assistant', content: `answer ${index}` })
  }

  const contents: unknown[] = []
  for (const [index, text] of turns('gemini', 3).entries()) {
    contents.push({ role: 'user', parts: [{ text }] })
    sent.push({
      path: '/gemini/v1beta/models/gemini-2.5-flash:generateContent',
      session: 'gemini',
      body: { systemInstruction: { parts: [{ text: system }] }, contents: [...contents] },
    })
    contents.push({ role: 'model', parts: [{ text: `answer ${index}` }] })
  }

  const converse: unknown[] = []
  for (const [index, text] of turns('bedrock', 3).entries()) {
    converse.push({ role: 'user', content: [{ text }, { cachePoint: { type: 'default' } }] })
    sent.push({
      path: '/bedrock/model/anthropic.claude-sonnet-4-6/converse',
      session: 'bedrock',
      body: { system: [{ text: system }], messages: [...converse] },
    })
    converse[converse.length - 1] = { role: 'user', content: [{ text }] }
    converse.push({ role: 'assistant', content: [{ text: `answer ${index}` }] })
  }
  return sent
}

/** Send the traffic one request after another, each at its own virtual time; the answers as sent. */
async function sendAll(sent: readonly Sent[], urlOf: (path: string) => string): Promise<string[]> {
  const answers: string[] = []
  for (const [index, request] of sent.entries()) {
    const response = await fetch(urlOf(request.path), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'test',
        authorization: 'Bearer test',
        'x-cachelab-session': request.session,
        [TIME_HEADER]: String(index * 10),
      },
      body: JSON.stringify(request.body),
    })
    answers.push(`${response.status} ${await response.text()}`)
  }
  return answers
}

/** Serve the traffic on a fresh server, with or without reuse. */
async function serve(reuseItems: boolean, sent: readonly Sent[]): Promise<Served> {
  const exchanges: CapturedExchange[] = []
  const log: ServeLogRecord[] = []
  const linearizer = new CacheSimulators()
  const capture = new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    sink: (exchange) => exchanges.push(exchange),
    reuseItems,
  })
  const server: LoopbackServer = await startLoopback({
    upstream: 'sim',
    port: 0,
    capture,
    log: (record) => log.push(record),
  })
  let answers: string[]
  try {
    answers = await sendAll(sent, (path) => `${server.url}${path}`)
  } finally {
    await server.close()
  }
  const timeless = ({ time: _time, latencyMs: _latency, ...rest }: { time?: string; latencyMs?: number }) =>
    rest
  return {
    answers,
    exchanges: exchanges.map(timeless),
    log: log.map(timeless),
    reused: capture.reuseStats.reused,
    repeated: capture.reuseStats.repeated,
  }
}

/** The loopback's paths on the real hosts the in-process handlers answer. */
function hostURL(path: string): string {
  const [, vendor, rest] = /^\/(openai\/v1|anthropic|gemini|bedrock)(\/.*)$/.exec(path) ?? []
  const base =
    vendor === 'openai/v1'
      ? DEFAULT_BASE_URLS.openai
      : DEFAULT_BASE_URLS[vendor as 'anthropic' | 'gemini' | 'bedrock']
  if (base === undefined) throw new Error(`no host for ${path}`)
  return `${base}${rest}`
}

/** The traffic through the in-process handlers (MSW, no server): each handler parses its own bodies. */
async function inProcess(
  reuseItems: boolean,
  sent: readonly Sent[],
): Promise<{ answers: string[]; reused: number }> {
  const context = new MockContext({ reuseItems, clock: () => 0 })
  const msw = setupServer(...mockHandlers(context))
  msw.listen({ onUnhandledRequest: 'error' })
  try {
    return { answers: await sendAll(sent, hostURL), reused: context.reusedItems }
  } finally {
    msw.close()
  }
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('serve reuses the items a session sends again', () => {
  it('answers, captures and logs exactly as without the reuse, on every wire', async () => {
    const sent = traffic()
    const without = await serve(false, sent)
    const reused = await serve(true, sent)
    expect(without.reused).toBe(0)
    expect(reused.reused).toBeGreaterThan(20)
    // Items taken from an earlier body's bytes, not parsed again.
    expect(without.repeated).toBe(0)
    expect(reused.repeated).toBeGreaterThan(10)
    expect(without.answers.every((answer) => answer.startsWith('200 '))).toBe(true)
    expect(reused.answers).toEqual(without.answers)
    expect(reused.exchanges).toEqual(without.exchanges)
    expect(reused.log).toEqual(without.log)
  })

  it('hands the items it reuses to code that never writes to them', async () => {
    // Every item is frozen once the reuse has seen it: a write anywhere downstream (simulators, digests,
    // validation, the Responses store, the handlers) throws in strict mode and fails the request.
    const reuse = ItemReuse.prototype.reuse
    vi.spyOn(ItemReuse.prototype, 'reuse').mockImplementation(function (this: ItemReuse, body) {
      const remembered = reuse.call(this, body)
      for (const key of ['messages', 'contents', 'input'])
        if (Array.isArray(body[key])) for (const item of body[key]) deepFreeze(item)
      return remembered
    })
    const served = await serve(true, traffic())
    expect(served.reused).toBeGreaterThan(20)
    expect(served.answers.filter((answer) => !answer.startsWith('200 '))).toEqual([])
    const handled = await inProcess(true, traffic())
    expect(handled.reused).toBeGreaterThan(20)
    expect(handled.answers.filter((answer) => !answer.startsWith('200 '))).toEqual([])
  })

  it('in process, where the handlers parse the bodies, answers exactly as without the reuse', async () => {
    const sent = traffic()
    const without = await inProcess(false, sent)
    const reused = await inProcess(true, sent)
    expect(without.reused).toBe(0)
    expect(reused.reused).toBeGreaterThan(20)
    expect(without.answers.every((answer) => answer.startsWith('200 '))).toBe(true)
    expect(reused.answers).toEqual(without.answers)
  })
})

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return
  Object.freeze(value)
  for (const field of Object.values(value)) deepFreeze(field)
}
