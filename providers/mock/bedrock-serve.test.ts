// The official Bedrock Runtime SDK as a user points it at `cachelab serve`: SigV4 with placeholder
// credentials, the endpoint docs/serve.md's base-URL table gives (`…/bedrock`), and Smithy's HTTP/1.1 handler
// (the client's default handler speaks HTTP/2 only, which `serve` does not: "Protocol error").

import {
  BedrockRuntimeClient,
  type ContentBlock,
  ConverseCommand,
  type Message,
} from '@aws-sdk/client-bedrock-runtime'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { type LoopbackServer, startLoopback } from './loopback.ts'

let server: LoopbackServer
beforeAll(async () => {
  server = await startLoopback({ upstream: 'sim', port: 0 })
})
afterAll(() => server.close())

const point: ContentBlock = { cachePoint: { type: 'default' } }

describe('the AWS SDK against cachelab serve', () => {
  it('sees cached tokens grow over a 5-turn conversation', async () => {
    const client = new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: server.baseURLs.bedrock,
      credentials: { accessKeyId: 'AKIAPLACEHOLDER', secretAccessKey: 'placeholder-secret' },
      requestHandler: new NodeHttpHandler(),
    })
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
