import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LoopbackServer, startLoopback } from '../loopback.ts'
import { roleColumn } from './deepseek.ts'

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
  new OpenAI({ apiKey: 'cachelab-test-key', baseURL: server.baseURLs.deepseek, maxRetries: 0 })

/** DeepSeek's body: Chat Completions with its `thinking` switch and `reasoning_content` on replies. */
type Params = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming & {
  thinking?: { type: 'enabled' | 'disabled' }
}
type Message = OpenAI.Chat.ChatCompletionMessageParam | { role: string; content: string }

/** The API error the SDK threw for a request, or undefined when it was answered. */
async function send(server: LoopbackServer, params: Params) {
  return client(server)
    .chat.completions.create(params)
    .then(
      () => undefined,
      (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
    )
}

const call = { id: 'call_1', type: 'function' as const, function: { name: 'grep', arguments: '{}' } }
const toolRound = (reasoning?: string): Message[] => [
  { role: 'user', content: 'Find the parser.' },
  {
    role: 'assistant',
    content: '',
    tool_calls: [call],
    ...(reasoning !== undefined ? { reasoning_content: reasoning } : {}),
  } as OpenAI.Chat.ChatCompletionAssistantMessageParam,
  { role: 'tool', tool_call_id: 'call_1', content: 'src/parser.ts' },
]

const params = (messages: Message[], extra: Partial<Params> = {}): Params => ({
  model: 'deepseek-flash',
  messages: messages as OpenAI.Chat.ChatCompletionMessageParam[],
  ...extra,
})

const REFUSED: Array<{ rule: string; params: Params; message: string }> = [
  {
    rule: 'a developer message',
    params: params([
      { role: 'developer', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]),
    message:
      'Failed to deserialize the JSON body into the target type: messages[0].role: unknown variant `developer`, expected one of `system`, `user`, `assistant`, `tool`, `latest_reminder` at line 1 column 57',
  },
  {
    rule: 'a tool message that answers no call',
    params: params([{ role: 'tool', tool_call_id: 'call_1', content: 'x' } as Message]),
    message: "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
  },
  {
    rule: 'a tool call left unanswered',
    params: params([...toolRound('').slice(0, 2), { role: 'user', content: 'Well?' }]),
    message:
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
  },
  {
    rule: 'a tool-calling assistant message without reasoning_content in thinking mode (on by default)',
    params: params(toolRound()),
    message: 'The `reasoning_content` in the thinking mode must be passed back to the API.',
  },
]

describe('the DeepSeek mock refuses what its API refuses', () => {
  for (const { rule, params: body, message } of REFUSED) {
    it(`answers ${rule} with DeepSeek's 400`, async () => {
      const thrown = await send(strict, body)
      expect(thrown).toBeInstanceOf(OpenAI.BadRequestError)
      expect(thrown?.error).toEqual({
        message,
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_error',
      })
    })

    it(`accepts ${rule} when lenient`, async () => {
      expect(await send(lenient, body)).toBeUndefined()
    })
  }

  it('accepts a tool round with its reasoning passed back, or with thinking turned off', async () => {
    expect(await send(strict, params(toolRound('Grep for it.')))).toBeUndefined()
    expect(await send(strict, params(toolRound(), { thinking: { type: 'disabled' } }))).toBeUndefined()
  })
})

describe('roleColumn', () => {
  it("is where a parser of the compact body finishes the role's string, as serde reports it", () => {
    const body = {
      model: 'deepseek-flash',
      messages: [{ role: 'user', content: 'a' }, { role: 'developer' }],
    }
    const text = JSON.stringify(body)
    const end = text.indexOf('"developer"') + '"developer"'.length
    expect(roleColumn(body, 1)).toBe(end)
    expect(text[end - 1]).toBe('"')
  })
})
