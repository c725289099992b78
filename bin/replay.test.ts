// Record once, replay keyless: a session recorded through `serve --upstream live --record` (the "provider"
// here is a local simulated server whose answers the client scripts) is served again by
// `serve --replay` with the same answers — tool call ids included — and no key, and a request that
// changed is refused with the first node that differs.

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import OpenAI from 'openai'
import { describe, expect, it } from 'vitest'
import type { AssistantMessage } from '../harness/types.ts'
import { type LoopbackOptions, startLoopback } from '../providers/mock/loopback.ts'
import { encodeScript, SCRIPT_HEADER } from '../providers/mock/script.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { ReplaySource } from '../reports/observed/capture/replay.ts'
import { CaptureWriter, openCapture } from '../reports/observed/capture/store.ts'
import { CaptureTracker } from '../reports/observed/capture/tracker.ts'
import { reportCapture } from './report.ts'

const LIVE_KEY = 'live-only-secret-0123456789'
const SYSTEM = `You answer questions about the weather. ${'Be precise and cite the station. '.repeat(150)}`
const TOOLS: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'lookup',
      description: 'Look up a station',
      parameters: { type: 'object', properties: {} },
    },
  },
]

/** What the "provider" answers, request by request, when recording. */
const SCRIPT: AssistantMessage[] = [
  {
    role: 'assistant',
    content: [{ type: 'tool-call', callId: 'call_rec_1', name: 'lookup', arguments: '{"station":"EDDB"}' }],
  },
  { role: 'assistant', content: [{ type: 'text', text: 'Berlin reports 4 °C and light rain.' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'Tomorrow: dry, 7 °C.' }] },
]

/** A small agent: two user turns, a tool round trip in the first. Returns every assistant reply it got. */
async function agent(
  client: OpenAI,
  options: { scripted: boolean; stream: boolean; secondQuestion?: string },
) {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'system', content: SYSTEM }]
  const replies: Array<{
    text: string | null
    calls: Array<{ id: string; name: string; arguments: string }>
  }> = []
  let request = 0
  const send = async () => {
    const headers = options.scripted
      ? { [SCRIPT_HEADER]: encodeScript(SCRIPT[request] as AssistantMessage) }
      : {}
    request += 1
    const body = { model: 'gpt-5.4', messages, tools: TOOLS }
    let message: OpenAI.Chat.ChatCompletionMessage
    if (options.stream) {
      message = await client.chat.completions.stream({ ...body, stream: true }, { headers }).finalMessage()
    } else {
      const completion = await client.chat.completions.create(body, { headers })
      message = completion.choices[0]?.message as OpenAI.Chat.ChatCompletionMessage
    }
    const calls = (message.tool_calls ?? []).flatMap((call) =>
      call.type === 'function'
        ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments }]
        : [],
    )
    replies.push({ text: message.content === '' ? null : message.content, calls })
    messages.push({
      role: 'assistant',
      content: message.content,
      ...(message.tool_calls !== undefined && message.tool_calls.length > 0
        ? { tool_calls: message.tool_calls }
        : {}),
    })
    return calls
  }
  messages.push({ role: 'user', content: 'What is the weather in Berlin?' })
  for (const call of await send())
    messages.push({ role: 'tool', tool_call_id: call.id, content: '4 °C, rain' })
  await send()
  messages.push({ role: 'user', content: options.secondQuestion ?? 'And tomorrow?' })
  await send()
  return replies
}

/** Start a server with a capture tracker (and a writer into `dir`, if given), as `serve` does. */
async function serveWith(options: Omit<LoopbackOptions, 'capture'> & { dir?: string; live?: boolean }) {
  const linearizer = new CacheSimulators()
  const writer =
    options.dir === undefined
      ? undefined
      : CaptureWriter.open(
          options.dir,
          {
            id: 'replay-test',
            started: '2026-11-30T00:00:00.000Z',
            upstream: options.upstream,
            bodies: false,
          },
          (error) => {
            throw error
          },
        )
  const capture = new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    keepAnswers: options.live === true,
    ...(writer !== undefined ? { sink: (exchange) => writer.write(exchange) } : {}),
  })
  return startLoopback({ ...options, capture })
}

async function record(): Promise<{ dir: string; replies: Awaited<ReturnType<typeof agent>> }> {
  const provider = await startLoopback({ upstream: 'sim', port: 0 })
  const dir = mkdtempSync(join(tmpdir(), 'cachelab-record-live-'))
  const proxy = await serveWith({
    upstream: 'live',
    port: 0,
    dir,
    live: true,
    liveBaseURLs: provider.baseURLs,
  })
  try {
    const client = new OpenAI({ apiKey: LIVE_KEY, baseURL: proxy.baseURLs.openai, maxRetries: 0 })
    return { dir, replies: await agent(client, { scripted: true, stream: true }) }
  } finally {
    await proxy.close()
    await provider.close()
  }
}

describe('record once through a live proxy, replay keyless', () => {
  it('serves the recorded answers again, with simulated usage and no key anywhere in the recording', async () => {
    const { dir, replies } = await record()
    expect(replies.map((reply) => reply.calls[0]?.id ?? reply.text)).toEqual([
      'call_rec_1',
      'Berlin reports 4 °C and light rain.',
      'Tomorrow: dry, 7 °C.',
    ])
    for (const file of readdirSync(join(dir, 'sessions')))
      expect(readFileSync(join(dir, 'sessions', file), 'utf8')).not.toContain(LIVE_KEY)
    expect(readFileSync(join(dir, 'capture.json'), 'utf8')).not.toContain(LIVE_KEY)

    const mismatches: string[] = []
    const replay = await serveWith({
      upstream: 'sim',
      port: 0,
      replay: new ReplaySource(openCapture(dir)),
      onReplayMismatch: (message) => mismatches.push(message),
    })
    try {
      const client = new OpenAI({ apiKey: 'any', baseURL: replay.baseURLs.openai, maxRetries: 0 })
      const replayed = await agent(client, { scripted: false, stream: false })
      expect(replayed).toEqual(replies)
      expect(mismatches).toEqual([])
    } finally {
      await replay.close()
    }
    // The recording's rows: the live usage beside the prediction, the tool round trip as turn 1's two steps.
    const { rows } = reportCapture(dir)
    expect(rows.map((row) => `${row.turn}.${row.step}`)).toEqual(['1.1', '1.2', '2.1'])
  })

  it('refuses a request that differs from the recording, naming the first differing node', async () => {
    const { dir } = await record()
    const mismatches: string[] = []
    const replay = await serveWith({
      upstream: 'sim',
      port: 0,
      replay: new ReplaySource(openCapture(dir)),
      onReplayMismatch: (message) => mismatches.push(message),
    })
    try {
      const client = new OpenAI({ apiKey: 'any', baseURL: replay.baseURLs.openai, maxRetries: 0 })
      await expect(
        agent(client, { scripted: false, stream: false, secondQuestion: 'And on Sunday?' }),
      ).rejects.toThrow(
        /cachelab replay: request 3 of session c-[0-9a-f]{8} \(turn 2\.1\) differs from the recording at messages\[5\]/,
      )
      expect(mismatches).toHaveLength(1)
    } finally {
      await replay.close()
    }
  })
})

describe('a recorded attempt that failed after its 200', () => {
  it('fails the same way in the replay (an error event, a cut stream), and the retry gets the answer', async () => {
    // The provider fails the first request's stream with an error event and the second's with a cut.
    const provider = await startLoopback({
      upstream: 'sim',
      port: 0,
      faults: [
        { request: 1, fault: { kind: 'stream-error' } },
        { request: 2, fault: { kind: 'stream-cut', afterFrames: 2 } },
      ],
    })
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-record-failed-'))
    /** Three attempts of one request, streamed: what each one got (the answer's text, or the failure). */
    const attempts = async (baseURL: string) => {
      const client = new OpenAI({ apiKey: LIVE_KEY, baseURL, maxRetries: 0 })
      const got: string[] = []
      for (let attempt = 0; attempt < 3; attempt += 1) {
        try {
          const message = await client.chat.completions
            .stream({
              model: 'gpt-5.4',
              messages: [
                { role: 'system', content: SYSTEM },
                { role: 'user', content: 'What is the weather in Berlin?' },
              ],
              stream: true,
              stream_options: { include_usage: true },
            })
            .finalMessage()
          got.push(`answer: ${message.content}`)
        } catch (error) {
          got.push(error instanceof OpenAI.APIError && error.status === undefined ? 'error event' : 'failed')
        }
      }
      return got
    }
    const proxy = await serveWith({
      upstream: 'live',
      port: 0,
      dir,
      live: true,
      liveBaseURLs: provider.baseURLs,
    })
    let recorded: string[]
    try {
      recorded = await attempts(proxy.baseURLs.openai)
    } finally {
      await proxy.close()
      await provider.close()
    }
    expect(recorded).toEqual(['error event', 'failed', 'answer: OK.'])

    const mismatches: string[] = []
    const replayDir = mkdtempSync(join(tmpdir(), 'cachelab-replay-failed-'))
    const replay = await serveWith({
      upstream: 'sim',
      port: 0,
      dir: replayDir,
      replay: new ReplaySource(openCapture(dir)),
      onReplayMismatch: (message) => mismatches.push(message),
    })
    try {
      expect(await attempts(replay.baseURLs.openai)).toEqual(recorded)
      expect(mismatches).toEqual([])
    } finally {
      await replay.close()
    }
    // Both captures hold two failed attempts without usage and one answered request.
    for (const capture of [dir, replayDir]) {
      const exchanges = openCapture(capture).read(openCapture(capture).sessions[0] ?? '')
      expect(
        exchanges.map((exchange) => [exchange.status, exchange.error ?? null, exchange.usage !== undefined]),
      ).toEqual([
        [200, expect.stringMatching(/^error event in the stream/), false],
        [200, expect.stringMatching(/^stream cut/), false],
        [200, null, true],
      ])
    }
  })
})
