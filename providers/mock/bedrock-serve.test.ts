// The official Bedrock Runtime SDK as a user points it at `cachelab serve`: SigV4 with placeholder
// credentials, the endpoint docs/serve.md's base-URL table gives (`…/bedrock`), and Smithy's HTTP/1.1 handler
// (the client's default handler speaks HTTP/2 only, which `serve` does not: "Protocol error").
// With capture on, its Converse and ConverseStream requests are recorded with the model id their path
// names, the usage the client read (a stream's from its event-stream metadata) and whether it streamed.

import {
  BedrockRuntimeClient,
  type ContentBlock,
  ConverseCommand,
  ConverseStreamCommand,
  type Message,
  type TokenUsage,
} from '@aws-sdk/client-bedrock-runtime'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import { CacheSimulators } from '../sim/index.ts'
import type { CapturedExchange } from '../wire/exchange.ts'
import { type LoopbackServer, startLoopback } from './loopback.ts'

let server: LoopbackServer
beforeAll(async () => {
  server = await startLoopback({ upstream: 'sim', port: 0 })
})
afterAll(() => server.close())

const point: ContentBlock = { cachePoint: { type: 'default' } }

/**
 * The AWS SDK as docs/serve.md points it at serve: SigV4 with placeholder credentials, Smithy's HTTP/1.1
 * handler, and no retries (a failure is the test's to see).
 */
function bedrockClient(endpoint: string): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    region: 'us-east-1',
    endpoint,
    maxAttempts: 1,
    credentials: { accessKeyId: 'AKIAPLACEHOLDER', secretAccessKey: 'placeholder-secret' },
    requestHandler: new NodeHttpHandler(),
  })
}

describe('the AWS SDK against cachelab serve', () => {
  it('sees cached tokens grow over a 5-turn conversation', async () => {
    const client = bedrockClient(server.baseURLs.bedrock)
    const messages: Message[] = []
    const reads: number[] = []
    for (let turn = 0; turn < 5; turn += 1) {
      messages.push({ role: 'user', content: [{ text: `Question ${turn + 1}. ${fillerText(300, turn)}` }] })
      const output = await client.send(
        new ConverseCommand({
          modelId: 'anthropic.claude-sonnet-4-6',
          system: [{ text: fillerText(2000, 'serve-system') }, point],
          // A cache point after the newest turn, as an agent loop sets it.
          messages: messages.map((message, index) =>
            index === messages.length - 1
              ? { ...message, content: [...(message.content ?? []), point] }
              : message,
          ),
          inferenceConfig: { maxTokens: 128 },
        }),
      )
      reads.push(output.usage?.cacheReadInputTokens ?? 0)
      messages.push({ role: 'assistant', content: output.output?.message?.content ?? [{ text: 'OK.' }] })
    }
    expect(reads[0]).toBe(0)
    for (let index = 1; index < reads.length; index += 1)
      expect(reads[index]).toBeGreaterThan(reads[index - 1] ?? 0)
    client.destroy()
  })
})

const MODEL_ID = 'anthropic.claude-sonnet-4-6'

describe('a Bedrock client through serve with capture on', () => {
  it('records every Converse and ConverseStream request with its model, its usage and its stream', async () => {
    const exchanges: CapturedExchange[] = []
    const linearizer = new CacheSimulators()
    const server = await startLoopback({
      upstream: 'sim',
      port: 0,
      capture: new CaptureTracker({
        linearize: (api, body) => linearizer.linearize(api, body),
        sink: (exchange) => exchanges.push(exchange),
      }),
    })
    const client = bedrockClient(server.baseURLs.bedrock)
    const system = [
      { text: fillerText(2_500, 'bedrock-capture-system') },
      { cachePoint: { type: 'default' as const } },
    ]
    const messages: Message[] = []
    const seen: Array<{ read: number; written: number; input: number }> = []
    try {
      for (let turn = 1; turn <= 4; turn += 1) {
        messages.push({
          role: 'user',
          content: [{ text: `Question ${turn}: ${fillerText(40, `q-${turn}`)}` }],
        })
        const input = { modelId: MODEL_ID, system, messages: [...messages] }
        let usage: TokenUsage | undefined
        let text = ''
        if (turn % 2 === 1) {
          const reply = await client.send(new ConverseCommand(input))
          usage = reply.usage
          text = reply.output?.message?.content?.[0]?.text ?? ''
        } else {
          const reply = await client.send(new ConverseStreamCommand(input))
          for await (const event of reply.stream ?? []) {
            text += event.contentBlockDelta?.delta?.text ?? ''
            if (event.metadata?.usage !== undefined) usage = event.metadata.usage
          }
        }
        seen.push({
          read: usage?.cacheReadInputTokens ?? 0,
          written: usage?.cacheWriteInputTokens ?? 0,
          input: usage?.inputTokens ?? 0,
        })
        messages.push({ role: 'assistant', content: [{ text }] })
      }
    } finally {
      client.destroy()
      await server.close()
    }
    expect(
      exchanges.map((exchange) => [exchange.api, exchange.model, exchange.stream, exchange.status]),
    ).toEqual([
      ['bedrock-converse', MODEL_ID, false, 200],
      ['bedrock-converse', MODEL_ID, true, 200],
      ['bedrock-converse', MODEL_ID, false, 200],
      ['bedrock-converse', MODEL_ID, true, 200],
    ])
    // One conversation, a turn a request.
    expect(new Set(exchanges.map((exchange) => exchange.conversation)).size).toBe(1)
    expect(exchanges.map((exchange) => exchange.turn)).toEqual([1, 2, 3, 4])
    // The usage recorded is the one the client read, streamed or not.
    expect(
      exchanges.map((exchange) => ({
        read: exchange.usage?.cacheRead,
        written: exchange.usage?.cacheWrite,
        input: exchange.usage?.uncached,
      })),
    ).toEqual(seen)
    // The cached system prompt is read from the second request on.
    expect(seen[0]?.written).toBeGreaterThan(2_000)
    for (const later of seen.slice(1)) expect(later.read).toBeGreaterThanOrEqual(seen[0]?.written ?? 0)
  })
})

describe('a Bedrock client through serve --upstream live with capture on', () => {
  it("keeps each answer for replay, and records a stream's exception as a failed attempt", async () => {
    // The "provider" is cachelab's own sim upstream; it fails the third request's stream with an exception.
    const provider = await startLoopback({
      upstream: 'sim',
      port: 0,
      faults: [{ request: 3, fault: { kind: 'stream-error' } }],
    })
    const exchanges: CapturedExchange[] = []
    const linearizer = new CacheSimulators()
    const proxy = await startLoopback({
      upstream: 'live',
      port: 0,
      liveBaseURLs: provider.baseURLs,
      capture: new CaptureTracker({
        linearize: (api, body) => linearizer.linearize(api, body),
        keepAnswers: true,
        sink: (exchange) => exchanges.push(exchange),
      }),
    })
    const client = bedrockClient(proxy.baseURLs.bedrock)
    const messages: Message[] = []
    const got: string[] = []
    try {
      for (let turn = 1; turn <= 3; turn += 1) {
        messages.push({
          role: 'user',
          content: [{ text: `Question ${turn}: ${fillerText(40, `live-${turn}`)}` }],
        })
        const input = { modelId: MODEL_ID, messages: [...messages] }
        let text = ''
        try {
          if (turn === 1)
            text = (await client.send(new ConverseCommand(input))).output?.message?.content?.[0]?.text ?? ''
          else
            for await (const event of (await client.send(new ConverseStreamCommand(input))).stream ?? [])
              text += event.contentBlockDelta?.delta?.text ?? ''
          got.push(text)
        } catch (error) {
          got.push(`failed: ${(error as Error).name}`)
        }
        messages.push({ role: 'assistant', content: [{ text: text === '' ? 'OK.' : text }] })
      }
    } finally {
      client.destroy()
      await proxy.close()
      await provider.close()
    }
    expect(got).toEqual(['OK.', 'OK.', 'failed: ServiceUnavailableException'])
    expect(
      exchanges.map((exchange) => [
        exchange.status,
        exchange.error ?? null,
        exchange.usage !== undefined,
        exchange.answer?.content,
      ]),
    ).toEqual([
      [200, null, true, [{ type: 'text', text: 'OK.' }]],
      [200, null, true, [{ type: 'text', text: 'OK.' }]],
      [200, 'error event in the stream: serviceUnavailableException', false, undefined],
    ])
  })
})
