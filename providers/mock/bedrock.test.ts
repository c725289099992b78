import {
  type BedrockRuntimeClient,
  type ContentBlock,
  ConverseCommand,
  type ConverseCommandInput,
  ConverseStreamCommand,
  type Message,
  type TokenUsage,
} from '@aws-sdk/client-bedrock-runtime'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { bedrockClient } from '../bedrock.ts'
import { simulatedEndpoint } from '../endpoints.ts'
import { type MockProviders, startMockProviders } from './server.ts'

let mock: MockProviders
const client: BedrockRuntimeClient = await bedrockClient(simulatedEndpoint('bedrock'))

beforeAll(() => {
  mock = startMockProviders()
})
afterAll(() => mock.close())
beforeEach(() => mock.context.reset())

const modelId = 'us.anthropic.claude-sonnet-4-6'
const point: ContentBlock = { cachePoint: { type: 'default' } }
const system = fillerText(3000, 'bedrock-system')

/** An append-only conversation of `turns` user turns, a cache point after the system and the last turn. */
function conversation(turns: number): ConverseCommandInput {
  const messages: Message[] = []
  for (let turn = 0; turn < turns; turn += 1) {
    if (turn > 0) messages.push({ role: 'assistant', content: [{ text: 'OK.' }] })
    messages.push({ role: 'user', content: [{ text: `Question ${turn + 1}. ${fillerText(300, turn)}` }] })
  }
  messages.at(-1)?.content?.push(point)
  return { modelId, system: [{ text: system }, point], messages, inferenceConfig: { maxTokens: 256 } }
}

const headersAt = (at: number) => ({ 'x-cachelab-at': String(at) })

async function converse(input: ConverseCommandInput, at: number): Promise<TokenUsage> {
  const command = new ConverseCommand(input)
  command.middlewareStack.add(
    (next) => (args) => {
      Object.assign((args.request as { headers: Record<string, string> }).headers, headersAt(at))
      return next(args)
    },
    { step: 'build' },
  )
  const output = await client.send(command)
  if (output.usage === undefined) throw new Error('no usage')
  return output.usage
}

describe('mock Bedrock Converse over the AWS SDK', () => {
  it('reads more cached tokens as a 5-turn conversation grows, inputTokens excluding reads and writes', async () => {
    const reads: number[] = []
    for (let turns = 1; turns <= 5; turns += 1) {
      const usage = await converse(conversation(turns), turns * 10)
      reads.push(usage.cacheReadInputTokens ?? 0)
      expect(usage.totalTokens).toBe(
        (usage.inputTokens ?? 0) +
          (usage.cacheReadInputTokens ?? 0) +
          (usage.cacheWriteInputTokens ?? 0) +
          (usage.outputTokens ?? 0),
      )
    }
    expect(reads[0]).toBe(0)
    for (let index = 1; index < reads.length; index += 1)
      expect(reads[index]).toBeGreaterThan(reads[index - 1] ?? 0)
  })

  it('parses the event stream the mock frames (CRCs and all) into the same usage as the JSON answer', async () => {
    const plain = await converse(conversation(2), 10)
    mock.context.reset()
    const command = new ConverseStreamCommand(conversation(2))
    command.middlewareStack.add(
      (next) => (args) => {
        Object.assign((args.request as { headers: Record<string, string> }).headers, headersAt(10))
        return next(args)
      },
      { step: 'build' },
    )
    const output = await client.send(command)
    let text = ''
    let usage: TokenUsage | undefined
    let stopReason: string | undefined
    for await (const event of output.stream ?? []) {
      text += event.contentBlockDelta?.delta?.text ?? ''
      stopReason = event.messageStop?.stopReason ?? stopReason
      usage = event.metadata?.usage ?? usage
    }
    expect(text).toBe('OK.')
    expect(stopReason).toBe('end_turn')
    expect(usage).toEqual(plain)
  })

  it('caches nothing, and succeeds, when the cache point comes before the model minimum', async () => {
    const usage = await converse(
      { modelId, messages: [{ role: 'user', content: [{ text: 'A short question.' }, point] }] },
      0,
    )
    expect(usage.cacheWriteInputTokens).toBe(0)
    expect(usage.cacheReadInputTokens).toBe(0)
    expect(usage.inputTokens).toBeGreaterThan(0)
  })

  it('refuses a fifth cache point with a ValidationException', async () => {
    const content: ContentBlock[] = []
    for (let index = 0; index < 5; index += 1) content.push({ text: fillerText(50, index) }, point)
    const refused = converse({ modelId, messages: [{ role: 'user', content }] }, 0)
    await expect(refused).rejects.toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining('A maximum of 4 blocks with cache_control may be provided. Found 5.'),
      $metadata: { httpStatusCode: 400 },
    })
  })

  it('refuses a one-hour cache point on Nova, whose checkpoints live five minutes', async () => {
    const refused = converse(
      {
        modelId: 'amazon.nova-pro-v1:0',
        messages: [
          { role: 'user', content: [{ text: 'hi' }, { cachePoint: { type: 'default', ttl: '1h' } }] },
        ],
      },
      0,
    )
    await expect(refused).rejects.toMatchObject({ name: 'ValidationException' })
  })
})
