import OpenAI from 'openai'
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
  new OpenAI({ apiKey: 'cachelab-test-key', baseURL: server.baseURLs.openai, maxRetries: 0 })

type ChatParams = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming
type ResponsesParams = OpenAI.Responses.ResponseCreateParamsNonStreaming

/** The API error the SDK threw for a request, or undefined when it was answered. */
async function chat(server: LoopbackServer, params: ChatParams) {
  return client(server)
    .chat.completions.create(params)
    .then(
      () => undefined,
      (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
    )
}
async function responses(server: LoopbackServer, params: ResponsesParams) {
  return client(server)
    .responses.create(params)
    .then(
      () => undefined,
      (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
    )
}

const call = (id: string): OpenAI.Chat.ChatCompletionMessageToolCall => ({
  id,
  type: 'function',
  function: { name: 'read_file', arguments: '{"path":"a.ts"}' },
})

interface Refused {
  rule: string
  params: ChatParams
  error: { message: string; param: string; code: string | null }
}

const REFUSED: Refused[] = [
  {
    rule: 'max_tokens on a reasoning model (GPT-5.4)',
    params: { model: 'gpt-5.4', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] },
    error: {
      message:
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      param: 'max_tokens',
      code: 'unsupported_parameter',
    },
  },
  {
    rule: 'a temperature on a reasoning model at effort medium',
    params: {
      model: 'gpt-5.4',
      reasoning_effort: 'medium',
      temperature: 0.2,
      messages: [{ role: 'user', content: 'Hi' }],
    },
    error: {
      message:
        "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.",
      param: 'temperature',
      code: 'unsupported_value',
    },
  },
  {
    rule: 'a top_p on a model whose default effort is medium (GPT-5.6)',
    params: { model: 'gpt-5.6-sol', top_p: 0.5, messages: [{ role: 'user', content: 'Hi' }] },
    error: {
      message:
        "Unsupported value: 'top_p' does not support 0.5 with this model. Only the default (1) value is supported.",
      param: 'top_p',
      code: 'unsupported_value',
    },
  },
  {
    rule: 'a tool message that answers no call',
    params: {
      model: 'gpt-5.4',
      messages: [
        { role: 'user', content: 'Read a.ts' },
        { role: 'tool', tool_call_id: 'call_1', content: 'file text' },
      ],
    },
    error: {
      message:
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
      param: 'messages.[1].role',
      code: null,
    },
  },
  {
    rule: 'a tool call left unanswered before the next user message',
    params: {
      model: 'gpt-5.4',
      messages: [
        { role: 'user', content: 'Read two files' },
        { role: 'assistant', content: null, tool_calls: [call('call_1'), call('call_2')] },
        { role: 'tool', tool_call_id: 'call_1', content: 'file text' },
        { role: 'user', content: 'And?' },
      ],
    },
    error: {
      message:
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2",
      param: 'messages.[1].role',
      code: null,
    },
  },
  {
    rule: 'a prompt cache comparison, which only Responses answers',
    params: {
      model: 'gpt-5.6-sol',
      messages: [{ role: 'user', content: 'Hi' }],
      prompt_cache_options: { comparison_response_id: 'resp_1' },
    } as unknown as ChatParams,
    error: {
      message: "Unknown parameter: 'prompt_cache_options.comparison_response_id'.",
      param: 'prompt_cache_options.comparison_response_id',
      code: 'unknown_parameter',
    },
  },
]

describe('the OpenAI mock refuses what Chat Completions refuses', () => {
  for (const { rule, params, error } of REFUSED) {
    it(`answers ${rule} with a 400 invalid_request_error, the API's message, param and code`, async () => {
      const thrown = await chat(strict, params)
      expect(thrown).toBeInstanceOf(OpenAI.BadRequestError)
      expect(thrown?.status).toBe(400)
      expect(thrown?.error).toEqual({ type: 'invalid_request_error', ...error })
    })

    it(`accepts ${rule} when lenient`, async () => {
      expect(await chat(lenient, params)).toBeUndefined()
    })
  }

  it('accepts what the API accepts: max_tokens and temperature on GPT-4.1, temperature at effort none on GPT-5.4', async () => {
    const hi: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hi' }]
    expect(
      await chat(strict, { model: 'gpt-4.1', max_tokens: 64, temperature: 0.2, messages: hi }),
    ).toBeUndefined()
    expect(await chat(strict, { model: 'gpt-5.4', temperature: 0.2, messages: hi })).toBeUndefined()
    expect(
      await chat(strict, { model: 'gpt-5.6-sol', reasoning_effort: 'none', temperature: 0.2, messages: hi }),
    ).toBeUndefined()
  })
})

describe('the OpenAI mock refuses what Responses refuses', () => {
  it('answers a temperature at effort high with the same 400 as Chat Completions', async () => {
    const params: ResponsesParams = {
      model: 'gpt-5.4',
      reasoning: { effort: 'high' },
      temperature: 0.2,
      input: 'Hi',
    }
    const thrown = await responses(strict, params)
    expect(thrown?.status).toBe(400)
    expect(thrown?.error).toMatchObject({ param: 'temperature', code: 'unsupported_value' })
    expect(await responses(lenient, params)).toBeUndefined()
  })

  it('answers a comparison_response_id that is not a string with a type error, an unknown one with no error', async () => {
    const params = (compared: unknown) =>
      ({
        model: 'gpt-5.6-sol',
        input: 'Hi',
        prompt_cache_options: { comparison_response_id: compared },
      }) as unknown as ResponsesParams
    const thrown = await responses(strict, params(7))
    expect(thrown?.status).toBe(400)
    expect(thrown?.error).toMatchObject({
      message:
        "Invalid type for 'prompt_cache_options.comparison_response_id': expected a string, but got an integer instead.",
      param: 'prompt_cache_options.comparison_response_id',
      code: 'invalid_type',
    })
    expect(await responses(lenient, params(7))).toBeUndefined()
    expect(await responses(strict, params('resp_unknown'))).toBeUndefined()
  })
})
