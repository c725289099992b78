import Anthropic from '@anthropic-ai/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LoopbackServer, startLoopback } from '../loopback.ts'

// The official SDK against two servers: one that refuses what the API refuses, one started lenient.
let strict: LoopbackServer
let lenient: LoopbackServer
beforeAll(async () => {
  strict = await startLoopback({ upstream: 'sim', port: 0 })
  lenient = await startLoopback({ upstream: 'sim', port: 0, lenient: true })
})
afterAll(async () => {
  await strict.close()
  await lenient.close()
})

const client = (server: LoopbackServer) =>
  new Anthropic({ apiKey: 'cachelab-test-key', baseURL: server.baseURLs.anthropic, maxRetries: 0 })

type Params = Anthropic.MessageCreateParamsNonStreaming
const ask = (text: string): Anthropic.MessageParam => ({ role: 'user', content: text })
const toolUse = (id: string): Anthropic.ToolUseBlockParam => ({
  type: 'tool_use',
  id,
  name: 'read_file',
  input: { path: 'a.ts' },
})
const toolResult = (id: string): Anthropic.ToolResultBlockParam => ({
  type: 'tool_result',
  tool_use_id: id,
  content: 'file text',
})

/** A request with a `temperature`, which this SDK's types no longer list (clients still send it). */
const withTemperature = (model: string, temperature: number): Params =>
  ({ model, max_tokens: 64, temperature, messages: [ask('Hi')] }) as Params

/** Send a request; the API error the SDK threw, or undefined when it was answered. */
async function send(server: LoopbackServer, params: Params, headers: Record<string, string> = {}) {
  return client(server)
    .messages.create(params, { headers })
    .then(
      () => undefined,
      (error: unknown) => error as InstanceType<typeof Anthropic.APIError>,
    )
}

interface Refused {
  rule: string
  params: Params
  message: string
}

const REFUSED: Refused[] = [
  {
    rule: 'extended thinking on a model with adaptive thinking only (Opus 4.8)',
    params: {
      model: 'claude-opus-4-8',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [ask('Hi')],
    },
    message:
      '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
  },
  {
    rule: 'a thinking budget below 1,024 tokens',
    params: {
      model: 'claude-sonnet-4-6',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 512 },
      messages: [ask('Hi')],
    },
    message: 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
  },
  {
    rule: 'a thinking budget at max_tokens',
    params: {
      model: 'claude-sonnet-4-6',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [ask('Hi')],
    },
    message:
      '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
  },
  {
    rule: 'a temperature on a model that removed sampling parameters (Opus 4.8)',
    params: withTemperature('claude-opus-4-8', 0.2),
    message: '`temperature` is deprecated for this model.',
  },
  {
    rule: 'a tool_use with no tool_result in the next turn',
    params: {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [
        ask('Read a.ts'),
        { role: 'assistant', content: [toolUse('toolu_1'), toolUse('toolu_2')] },
        { role: 'user', content: [toolResult('toolu_1'), { type: 'text', text: 'and?' }] },
      ],
    },
    message:
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_2. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
  },
  {
    rule: 'a tool_result that answers no tool_use of the turn before',
    params: {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [{ role: 'user', content: [toolResult('toolu_9')] }],
    },
    message:
      'messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
  },
  {
    rule: 'cache diagnostics that name a previous message by anything but its id',
    params: {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [ask('Hi')],
      diagnostics: { previous_message_id: 42 },
    } as unknown as Params,
    message: 'diagnostics.previous_message_id: Input should be a valid string',
  },
  {
    rule: 'cache diagnostics that are not an object',
    params: {
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      messages: [ask('Hi')],
      diagnostics: 'msg_01',
    } as unknown as Params,
    message: 'diagnostics: Input should be a valid dictionary or object to extract fields from',
  },
]

describe('the Anthropic mock refuses what the Messages API refuses', () => {
  for (const { rule, params, message } of REFUSED) {
    it(`answers ${rule} with a 400 invalid_request_error and the API's message`, async () => {
      const error = await send(strict, params)
      expect(error).toBeInstanceOf(Anthropic.BadRequestError)
      expect(error?.status).toBe(400)
      expect(error?.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message } })
      expect(error?.requestID).toMatch(/^req_sim/)
    })

    it(`accepts ${rule} when lenient`, async () => {
      expect(await send(lenient, params)).toBeUndefined()
    })
  }
})

describe('the Anthropic mock accepts what the Messages API accepts', () => {
  const accepted: Array<{ what: string; params: Params; headers?: Record<string, string> }> = [
    {
      what: 'a first assistant message and consecutive user messages, which the API merges',
      params: {
        model: 'claude-sonnet-4-6',
        max_tokens: 64,
        messages: [{ role: 'assistant', content: 'How can I help?' }, ask('Read a.ts'), ask('Please.')],
      },
    },
    {
      what: 'tool results split over consecutive user messages',
      params: {
        model: 'claude-sonnet-4-6',
        max_tokens: 64,
        messages: [
          ask('Read two files'),
          { role: 'assistant', content: [toolUse('toolu_1'), toolUse('toolu_2')] },
          { role: 'user', content: [toolResult('toolu_1')] },
          { role: 'user', content: [toolResult('toolu_2')] },
        ],
      },
    },
    {
      what: 'a thinking budget above max_tokens with interleaved thinking',
      params: {
        model: 'claude-sonnet-4-6',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 4096 },
        messages: [ask('Hi')],
      },
      headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
    },
    {
      what: 'a temperature on a model that takes one (Sonnet 4.6)',
      params: withTemperature('claude-sonnet-4-6', 0.2),
    },
  ]
  for (const { what, params, headers } of accepted) {
    it(`answers ${what}`, async () => {
      expect(await send(strict, params, headers)).toBeUndefined()
    })
  }
})
