// Field types and ranges, per API: each rule's refusal through the loopback server (status 400, the API's
// envelope and wording, exactly), the valid boundary answered, and the refused request answered by a lenient
// server. Raw bodies: the SDKs' types would not let these requests be written.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LoopbackServer, startLoopback } from '../loopback.ts'

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

type Body = Record<string, unknown>
type Api = 'chat' | 'responses' | 'anthropic' | 'gemini' | 'deepseek' | 'bedrock'

const GEMINI_MODEL = 'gemini-2.5-flash'
const BEDROCK_MODEL = 'amazon.nova-lite-v1:0'

/** A request's status and JSON body, sent compact as SDKs send it. */
async function send(server: LoopbackServer, api: Api, body: Body) {
  const [url, headers] = ((): [string, Record<string, string>] => {
    switch (api) {
      case 'chat':
        return [`${server.baseURLs.openai}/chat/completions`, { authorization: 'Bearer test' }]
      case 'responses':
        return [`${server.baseURLs.openai}/responses`, { authorization: 'Bearer test' }]
      case 'anthropic':
        return [
          `${server.baseURLs.anthropic}/v1/messages`,
          { 'x-api-key': 'test', 'anthropic-version': '2023-06-01' },
        ]
      case 'gemini':
        return [
          `${server.baseURLs.gemini}/v1beta/models/${GEMINI_MODEL}:generateContent`,
          { 'x-goog-api-key': 'test' },
        ]
      case 'deepseek':
        return [`${server.baseURLs.deepseek}/chat/completions`, { authorization: 'Bearer test' }]
      case 'bedrock':
        return [`${server.baseURLs.bedrock}/model/${encodeURIComponent(BEDROCK_MODEL)}/converse`, {}]
    }
  })()
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  const json = (await response.json()) as Body
  // Anthropic's handler adds the request id beside the envelope; it differs per request.
  const { request_id: _requestId, ...envelope } = json
  return { status: response.status, body: envelope, errorType: response.headers.get('x-amzn-errortype') }
}

const chatBody = (extra: Body = {}): Body => ({
  model: 'gpt-4.1',
  messages: [{ role: 'user', content: 'Hi' }],
  ...extra,
})
const responsesBody = (extra: Body = {}): Body => ({ model: 'gpt-4.1', input: 'Hi', ...extra })
const anthropicBody = (extra: Body = {}): Body => ({
  model: 'claude-haiku-4-5',
  max_tokens: 64,
  messages: [{ role: 'user', content: 'Hi' }],
  ...extra,
})
const geminiBody = (extra: Body = {}): Body => ({
  contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
  ...extra,
})
const deepseekBody = (extra: Body = {}): Body => ({
  model: 'deepseek-flash',
  messages: [{ role: 'user', content: 'Hi' }],
  ...extra,
})
const bedrockBody = (inferenceConfig: Body): Body => ({
  messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
  inferenceConfig,
})

const openAI = (message: string, param: string, code: string) => ({
  error: { message, type: 'invalid_request_error', param, code },
})
const anthropic = (message: string) => ({ type: 'error', error: { type: 'invalid_request_error', message } })
const google = (message: string) => ({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } })
const deepseek = (message: string) => ({
  error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request_error' },
})
/** The 1-based column where serde finishes `fragment` in the compact body (DeepSeek names it). */
const columnAfter = (body: Body, fragment: string) => {
  const text = JSON.stringify(body)
  return text.indexOf(fragment) + fragment.length
}

interface Refused {
  rule: string
  api: Api
  body: Body
  error: Body
}

const numberFive = 5 as unknown as string

const REFUSED: Refused[] = [
  // OpenAI Chat Completions
  {
    rule: 'a role that is not a string',
    api: 'chat',
    body: chatBody({ messages: [{ role: 5, content: 'Hi' }] }),
    error: openAI(
      "Invalid type for 'messages[0].role': expected a string, but got an integer instead.",
      'messages[0].role',
      'invalid_type',
    ),
  },
  {
    rule: 'a role the API does not know',
    api: 'chat',
    body: chatBody({ messages: [{ role: 'bot', content: 'Hi' }] }),
    error: openAI(
      "Invalid value: 'bot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
      'messages[0].role',
      'invalid_value',
    ),
  },
  {
    rule: 'content that is neither text nor parts',
    api: 'chat',
    body: chatBody({ messages: [{ role: 'user', content: numberFive }] }),
    error: openAI(
      "Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an integer instead.",
      'messages[0].content',
      'invalid_type',
    ),
  },
  {
    rule: 'stream that is not a boolean',
    api: 'chat',
    body: chatBody({ stream: 'x' }),
    error: openAI(
      "Invalid type for 'stream': expected a boolean, but got a string instead.",
      'stream',
      'invalid_type',
    ),
  },
  {
    rule: 'max_tokens as a string',
    api: 'chat',
    body: chatBody({ max_tokens: '64' }),
    error: openAI(
      "Invalid type for 'max_tokens': expected an integer, but got a string instead.",
      'max_tokens',
      'invalid_type',
    ),
  },
  {
    rule: 'a negative max_completion_tokens',
    api: 'chat',
    body: chatBody({ max_completion_tokens: -5 }),
    error: openAI(
      "Invalid 'max_completion_tokens': integer below minimum value. Expected a value >= 1, but got -5 instead.",
      'max_completion_tokens',
      'integer_below_min_value',
    ),
  },
  {
    rule: 'max_completion_tokens past any bound (1e308)',
    api: 'chat',
    body: chatBody({ max_completion_tokens: 1e308 }),
    error: openAI(
      "Invalid 'max_completion_tokens': integer above maximum value. Expected a value <= 2147483647, but got 1e+308 instead.",
      'max_completion_tokens',
      'integer_above_max_value',
    ),
  },
  {
    rule: 'a temperature above 2',
    api: 'chat',
    body: chatBody({ temperature: 3 }),
    error: openAI(
      "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead.",
      'temperature',
      'decimal_above_max_value',
    ),
  },
  {
    rule: 'a negative top_p',
    api: 'chat',
    body: chatBody({ top_p: -0.5 }),
    error: openAI(
      "Invalid 'top_p': decimal below minimum value. Expected a value >= 0, but got -0.5 instead.",
      'top_p',
      'decimal_below_min_value',
    ),
  },
  {
    rule: 'a function tool without its function',
    api: 'chat',
    body: chatBody({ tools: [{ type: 'function' }] }),
    error: openAI(
      "Missing required parameter: 'tools[0].function'.",
      'tools[0].function',
      'missing_required_parameter',
    ),
  },
  {
    rule: 'tools that are not an array',
    api: 'chat',
    body: chatBody({ tools: { type: 'function' } }),
    error: openAI(
      "Invalid type for 'tools': expected an array, but got an object instead.",
      'tools',
      'invalid_type',
    ),
  },
  // OpenAI Responses
  {
    rule: 'an input message role the API does not know',
    api: 'responses',
    body: responsesBody({ input: [{ role: 'tool', content: 'Hi' }] }),
    error: openAI(
      "Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'.",
      'input[0].role',
      'invalid_value',
    ),
  },
  {
    rule: 'input that is neither text nor items',
    api: 'responses',
    body: responsesBody({ input: 5 }),
    error: openAI(
      "Invalid type for 'input': expected one of a string or array of objects, but got an integer instead.",
      'input',
      'invalid_type',
    ),
  },
  {
    rule: 'max_output_tokens below 16',
    api: 'responses',
    body: responsesBody({ max_output_tokens: 10 }),
    error: openAI(
      "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 instead.",
      'max_output_tokens',
      'integer_below_min_value',
    ),
  },
  {
    rule: 'stream that is not a boolean (Responses)',
    api: 'responses',
    body: responsesBody({ stream: 1 }),
    error: openAI(
      "Invalid type for 'stream': expected a boolean, but got an integer instead.",
      'stream',
      'invalid_type',
    ),
  },
  {
    rule: 'a function tool without a name',
    api: 'responses',
    body: responsesBody({ tools: [{ type: 'function', parameters: {} }] }),
    error: openAI(
      "Missing required parameter: 'tools[0].name'.",
      'tools[0].name',
      'missing_required_parameter',
    ),
  },
  // Anthropic Messages
  {
    rule: 'max_tokens of 0',
    api: 'anthropic',
    body: anthropicBody({ max_tokens: 0 }),
    error: anthropic('max_tokens: Input should be greater than or equal to 1'),
  },
  {
    rule: 'max_tokens past the model limit (1e308)',
    api: 'anthropic',
    body: anthropicBody({ max_tokens: 1e308 }),
    error: anthropic(
      'max_tokens: 1e+308 > 64000, which is the maximum allowed number of output tokens for claude-haiku-4-5',
    ),
  },
  {
    rule: 'max_tokens one past the model limit',
    api: 'anthropic',
    body: anthropicBody({ model: 'claude-sonnet-4-6', max_tokens: 128_001 }),
    error: anthropic(
      'max_tokens: 128001 > 128000, which is the maximum allowed number of output tokens for claude-sonnet-4-6',
    ),
  },
  {
    rule: 'max_tokens as a string',
    api: 'anthropic',
    body: anthropicBody({ max_tokens: '64' }),
    error: anthropic('max_tokens: Input should be a valid integer'),
  },
  {
    rule: 'a fractional max_tokens',
    api: 'anthropic',
    body: anthropicBody({ max_tokens: 1.5 }),
    error: anthropic('max_tokens: Input should be a valid integer, got a number with a fractional part'),
  },
  {
    rule: 'a role that is not user or assistant',
    api: 'anthropic',
    body: anthropicBody({ messages: [{ role: 5, content: 'Hi' }] }),
    error: anthropic("messages.0.role: Input should be 'user' or 'assistant'"),
  },
  {
    rule: 'content that is neither text nor blocks',
    api: 'anthropic',
    body: anthropicBody({ messages: [{ role: 'user', content: 5 }] }),
    error: anthropic('messages.0.content: Input should be a valid list'),
  },
  {
    rule: 'stream that is not a boolean',
    api: 'anthropic',
    body: anthropicBody({ stream: 'x' }),
    error: anthropic('stream: Input should be a valid boolean'),
  },
  {
    rule: 'a temperature above 1',
    api: 'anthropic',
    body: anthropicBody({ temperature: 1.5 }),
    error: anthropic('temperature: Input should be less than or equal to 1'),
  },
  {
    rule: 'a tool without a name',
    api: 'anthropic',
    body: anthropicBody({ tools: [{ input_schema: { type: 'object' } }] }),
    error: anthropic('tools.0.name: Field required'),
  },
  // Gemini generateContent
  {
    rule: 'a role that is not a string',
    api: 'gemini',
    body: geminiBody({ contents: [{ role: 5, parts: [{ text: 'Hi' }] }] }),
    error: google("Invalid value at 'contents[0].role' (TYPE_STRING), 5"),
  },
  {
    rule: 'parts that are not a list',
    api: 'gemini',
    body: geminiBody({ contents: [{ role: 'user', parts: 5 }] }),
    error: google(
      "Invalid value at 'contents[0].parts' (type.googleapis.com/google.ai.generativelanguage.v1beta.Part), 5",
    ),
  },
  {
    rule: 'maxOutputTokens past an int32 (1e308)',
    api: 'gemini',
    body: geminiBody({ generationConfig: { maxOutputTokens: 1e308 } }),
    error: google("Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32), 1e+308"),
  },
  {
    rule: 'maxOutputTokens as a word',
    api: 'gemini',
    body: geminiBody({ generationConfig: { maxOutputTokens: 'x' } }),
    error: google(`Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32), "x"`),
  },
  {
    rule: 'maxOutputTokens of 0',
    api: 'gemini',
    body: geminiBody({ generationConfig: { maxOutputTokens: 0 } }),
    error: google(
      'Unable to submit request because it has a maxOutputTokens value of 0 but the supported range is from 1 (inclusive) to 65537 (exclusive). Update the value and try again.',
    ),
  },
  {
    rule: 'a temperature above 2',
    api: 'gemini',
    body: geminiBody({ generationConfig: { temperature: 3 } }),
    error: google(
      'Unable to submit request because it has a temperature value of 3 but the supported range is from 0 (inclusive) to 2.0001 (exclusive). Update the value and try again.',
    ),
  },
  // OpenAI Chat Completions, beyond the first probe
  {
    rule: 'a presence_penalty above 2',
    api: 'chat',
    body: chatBody({ presence_penalty: 3 }),
    error: openAI(
      "Invalid 'presence_penalty': decimal above maximum value. Expected a value <= 2, but got 3 instead.",
      'presence_penalty',
      'decimal_above_max_value',
    ),
  },
  {
    rule: 'frequency_penalty as a string',
    api: 'chat',
    body: chatBody({ frequency_penalty: 'x' }),
    error: openAI(
      "Invalid type for 'frequency_penalty': expected a number, but got a string instead.",
      'frequency_penalty',
      'invalid_type',
    ),
  },
  {
    rule: 'n of 0',
    api: 'chat',
    body: chatBody({ n: 0 }),
    error: openAI(
      "Invalid 'n': integer below minimum value. Expected a value >= 1, but got 0 instead.",
      'n',
      'integer_below_min_value',
    ),
  },
  {
    rule: 'instructions that are not text',
    api: 'responses',
    body: responsesBody({ instructions: 5 }),
    error: openAI(
      "Invalid type for 'instructions': expected a string, but got an integer instead.",
      'instructions',
      'invalid_type',
    ),
  },
  // Anthropic Messages, beyond the first probe
  {
    rule: 'a negative top_k',
    api: 'anthropic',
    body: anthropicBody({ top_k: -1 }),
    error: anthropic('top_k: Input should be greater than or equal to 0'),
  },
  {
    rule: 'top_k as a string',
    api: 'anthropic',
    body: anthropicBody({ top_k: 'x' }),
    error: anthropic('top_k: Input should be a valid integer'),
  },
  {
    rule: 'system that is neither text nor blocks',
    api: 'anthropic',
    body: anthropicBody({ system: 5 }),
    error: anthropic('system: Input should be a valid list'),
  },
  {
    rule: 'stop_sequences that are not a list',
    api: 'anthropic',
    body: anthropicBody({ stop_sequences: 'END' }),
    error: anthropic('stop_sequences: Input should be a valid list'),
  },
  {
    rule: 'a stop sequence that is not a string',
    api: 'anthropic',
    body: anthropicBody({ stop_sequences: ['END', 5] }),
    error: anthropic('stop_sequences.1: Input should be a valid string'),
  },
  // Gemini generateContent, beyond the first probe
  {
    rule: 'a part that is not an object',
    api: 'gemini',
    body: geminiBody({ contents: [{ role: 'user', parts: [{ text: 'Hi' }, 5] }] }),
    error: google(
      "Invalid value at 'contents[0].parts[1]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Part), 5",
    ),
  },
  {
    rule: 'a systemInstruction given as plain text',
    api: 'gemini',
    body: geminiBody({ systemInstruction: 'Be brief.' }),
    error: google(
      `Invalid value at 'system_instruction' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), "Be brief."`,
    ),
  },
  {
    rule: 'generationConfig that is not an object',
    api: 'gemini',
    body: geminiBody({ generationConfig: 5 }),
    error: google(
      "Invalid value at 'generation_config' (type.googleapis.com/google.ai.generativelanguage.v1beta.GenerationConfig), 5",
    ),
  },
  {
    rule: 'topK as a word',
    api: 'gemini',
    body: geminiBody({ generationConfig: { topK: 'x' } }),
    error: google(`Invalid value at 'generation_config.top_k' (TYPE_INT32), "x"`),
  },
  // Bedrock Converse
  {
    rule: 'a maxTokens of 0',
    api: 'bedrock',
    body: bedrockBody({ maxTokens: 0 }),
    error: {
      message:
        "1 validation error detected: Value '0' at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value greater than or equal to 1",
    },
  },
  {
    rule: 'a temperature above 1',
    api: 'bedrock',
    body: bedrockBody({ temperature: 1.5 }),
    error: {
      message:
        "1 validation error detected: Value '1.5' at 'inferenceConfig.temperature' failed to satisfy constraint: Member must have value less than or equal to 1",
    },
  },
  {
    rule: 'content that is not a list of blocks',
    api: 'bedrock',
    body: { ...bedrockBody({}), messages: [{ role: 'user', content: 'Hi' }] },
    error: {
      message:
        'The format of the value at messages.0.content is invalid. Provide a list for the field and try again.',
    },
  },
  {
    rule: 'a content block that is not a structure',
    api: 'bedrock',
    body: { ...bedrockBody({}), messages: [{ role: 'user', content: [5] }] },
    error: {
      message:
        'The format of the value at messages.0.content.0 is invalid. Provide a structure for the field and try again.',
    },
  },
  {
    rule: 'a text block whose text is not a string',
    api: 'bedrock',
    body: { ...bedrockBody({}), messages: [{ role: 'user', content: [{ text: 5 }] }] },
    error: {
      message:
        'The format of the value at messages.0.content.0.text is invalid. Provide a string for the field and try again.',
    },
  },
  {
    rule: 'system that is not a list',
    api: 'bedrock',
    body: { ...bedrockBody({}), system: 'Be brief.' },
    error: {
      message: 'The format of the value at system is invalid. Provide a list for the field and try again.',
    },
  },
  {
    rule: 'a system block whose text is not a string',
    api: 'bedrock',
    body: { ...bedrockBody({}), system: [{ text: 5 }] },
    error: {
      message:
        'The format of the value at system.0.text is invalid. Provide a string for the field and try again.',
    },
  },
  {
    rule: 'inferenceConfig that is not a structure',
    api: 'bedrock',
    body: { ...bedrockBody({}), inferenceConfig: 5 },
    error: {
      message:
        'The format of the value at inferenceConfig is invalid. Provide a structure for the field and try again.',
    },
  },
  {
    rule: 'maxTokens as a string',
    api: 'bedrock',
    body: bedrockBody({ maxTokens: '64' }),
    error: {
      message:
        'The format of the value at inferenceConfig.maxTokens is invalid. Provide an integer for the field and try again.',
    },
  },
  {
    rule: 'a fractional maxTokens',
    api: 'bedrock',
    body: bedrockBody({ maxTokens: 1.5 }),
    error: {
      message:
        'The format of the value at inferenceConfig.maxTokens is invalid. Provide an integer for the field and try again.',
    },
  },
  {
    rule: 'maxTokens past an int32 (1e308)',
    api: 'bedrock',
    body: bedrockBody({ maxTokens: 1e308 }),
    error: {
      message:
        'The format of the value at inferenceConfig.maxTokens is invalid. Provide an integer for the field and try again.',
    },
  },
  {
    rule: 'temperature as a string',
    api: 'bedrock',
    body: bedrockBody({ temperature: 'x' }),
    error: {
      message:
        'The format of the value at inferenceConfig.temperature is invalid. Provide a number for the field and try again.',
    },
  },
  {
    rule: 'stopSequences that are not strings',
    api: 'bedrock',
    body: bedrockBody({ stopSequences: ['END', 5] }),
    error: {
      message:
        'The format of the value at inferenceConfig.stopSequences.1 is invalid. Provide a string for the field and try again.',
    },
  },
  {
    rule: 'toolConfig that is not a structure',
    api: 'bedrock',
    body: { ...bedrockBody({}), toolConfig: 5 },
    error: {
      message:
        'The format of the value at toolConfig is invalid. Provide a structure for the field and try again.',
    },
  },
  {
    rule: 'tools that are not a list',
    api: 'bedrock',
    body: { ...bedrockBody({}), toolConfig: { tools: 5 } },
    error: {
      message:
        'The format of the value at toolConfig.tools is invalid. Provide a list for the field and try again.',
    },
  },
  {
    rule: 'a tool whose name is not a string',
    api: 'bedrock',
    body: {
      ...bedrockBody({}),
      toolConfig: { tools: [{ toolSpec: { name: 5, inputSchema: { json: {} } } }] },
    },
    error: {
      message:
        'The format of the value at toolConfig.tools.0.toolSpec.name is invalid. Provide a string for the field and try again.',
    },
  },
]

// DeepSeek's refusals name the column where its parser stopped, so each is built from its body.
const deepseekRefused = (rule: string, body: Body, message: (body: Body) => string): Refused => ({
  rule,
  api: 'deepseek',
  body,
  error: deepseek(message(body)),
})
const PREFIX = 'Failed to deserialize the JSON body into the target type:'
REFUSED.push(
  deepseekRefused(
    'stream that is not a boolean',
    deepseekBody({ stream: 'x' }),
    (body) =>
      `${PREFIX} stream: invalid type: string "x", expected a boolean at line 1 column ${columnAfter(body, '"stream":"x"')}`,
  ),
  deepseekRefused(
    'a negative max_tokens',
    deepseekBody({ max_tokens: -5 }),
    (body) =>
      `${PREFIX} max_tokens: invalid value: integer \`-5\`, expected u32 at line 1 column ${columnAfter(body, '"max_tokens":-5')}`,
  ),
  deepseekRefused(
    'max_tokens as a string',
    deepseekBody({ max_tokens: '64' }),
    (body) =>
      `${PREFIX} max_tokens: invalid type: string "64", expected u32 at line 1 column ${columnAfter(body, '"max_tokens":"64"')}`,
  ),
  deepseekRefused(
    'a role that is not a string',
    deepseekBody({ messages: [{ role: 5, content: 'Hi' }] }),
    (body) =>
      `${PREFIX} messages[0].role: invalid type: integer \`5\`, expected variant identifier at line 1 column ${columnAfter(body, '"role":5')}`,
  ),
  deepseekRefused(
    'max_tokens of 0',
    deepseekBody({ max_tokens: 0 }),
    () => 'Invalid max_tokens value, the valid range of max_tokens is [1, 393216]',
  ),
  deepseekRefused(
    "max_tokens one past V4's output limit",
    deepseekBody({ model: 'deepseek-v4-pro', max_tokens: 393_217 }),
    () => 'Invalid max_tokens value, the valid range of max_tokens is [1, 393216]',
  ),
  deepseekRefused(
    'max_tokens past a u32',
    deepseekBody({ max_tokens: 4_294_967_296 }),
    (body) =>
      `${PREFIX} max_tokens: invalid value: integer \`4294967296\`, expected u32 at line 1 column ${columnAfter(body, '"max_tokens":4294967296')}`,
  ),
  deepseekRefused(
    'max_tokens past any bound (1e308)',
    deepseekBody({ max_tokens: 1e308 }),
    (body) =>
      `${PREFIX} max_tokens: invalid type: floating point \`1e308\`, expected u32 at line 1 column ${columnAfter(body, '"max_tokens":1e+308')}`,
  ),
  deepseekRefused(
    'temperature as a string',
    deepseekBody({ temperature: '1.3' }),
    (body) =>
      `${PREFIX} temperature: invalid type: string "1.3", expected f32 at line 1 column ${columnAfter(body, '"temperature":"1.3"')}`,
  ),
  deepseekRefused(
    'a top_p above 1',
    deepseekBody({ top_p: 2 }),
    () => 'Invalid top_p value, the valid range of top_p is [0, 1]',
  ),
  deepseekRefused(
    'a temperature above 2 outside thinking mode',
    deepseekBody({ temperature: 3, thinking: { type: 'disabled' } }),
    () => 'Invalid temperature value, the valid range of temperature is [0, 2]',
  ),
  deepseekRefused(
    'a presence_penalty below -2 outside thinking mode',
    deepseekBody({ thinking: { type: 'disabled' }, presence_penalty: -3 }),
    () => 'Invalid presence_penalty value, the valid range of presence_penalty is [-2, 2]',
  ),
  deepseekRefused(
    'the first field that does not deserialize, in the body order',
    deepseekBody({ max_tokens: 'many', stream: 'x' }),
    (body) =>
      `${PREFIX} max_tokens: invalid type: string "many", expected u32 at line 1 column ${columnAfter(body, '"max_tokens":"many"')}`,
  ),
  deepseekRefused(
    'content that is neither text nor parts',
    deepseekBody({ messages: [{ role: 'user', content: 5 }] }),
    (body) =>
      `${PREFIX} messages[0].content: invalid type: integer \`5\`, expected a string or an array at line 1 column ${columnAfter(body, '"content":5')}`,
  ),
)

describe('field types and ranges', () => {
  it.each(REFUSED)('$api refuses $rule with a 400 in its own words', async ({ api, body, error }) => {
    const answer = await send(strict, api, body)
    expect(answer.status).toBe(400)
    expect(answer.body).toEqual(error)
    if (api === 'bedrock') expect(answer.errorType).toMatch(/^ValidationException:/)
  })

  it.each(REFUSED)('a lenient server answers $api $rule', async ({ api, body }) => {
    expect((await send(lenient, api, body)).status).toBe(200)
  })

  const ACCEPTED: Array<{ what: string; api: Api; body: Body }> = [
    {
      what: 'max_completion_tokens 1, temperature 2, top_p 1',
      api: 'chat',
      body: chatBody({ max_completion_tokens: 1, temperature: 2, top_p: 1 }),
    },
    {
      what: 'stream false, content as parts, a named function tool',
      api: 'chat',
      body: chatBody({
        stream: false,
        messages: [{ role: 'developer', content: [{ type: 'text', text: 'Hi' }] }],
        tools: [{ type: 'function', function: { name: 'read' } }],
      }),
    },
    {
      what: 'null fields as unset',
      api: 'chat',
      body: chatBody({ max_tokens: null, temperature: null, stream: null }),
    },
    {
      what: 'max_output_tokens 16 and message items',
      api: 'responses',
      body: responsesBody({
        max_output_tokens: 16,
        input: [
          { role: 'developer', content: 'Be brief.' },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
        ],
      }),
    },
    { what: 'max_tokens 1', api: 'anthropic', body: anthropicBody({ max_tokens: 1 }) },
    {
      what: "max_tokens at the model's limit",
      api: 'anthropic',
      body: anthropicBody({ max_tokens: 64_000, temperature: 1, top_p: 0 }),
    },
    {
      what: 'max_tokens 128,000 on a model the catalog lacks',
      api: 'anthropic',
      body: anthropicBody({ model: 'claude-next-9', max_tokens: 128_000 }),
    },
    {
      what: 'maxOutputTokens 65,536 and as a numeric string',
      api: 'gemini',
      body: geminiBody({ generationConfig: { maxOutputTokens: '65536', temperature: 2, topP: 1 } }),
    },
    {
      what: 'maxOutputTokens 1',
      api: 'gemini',
      body: geminiBody({ generationConfig: { max_output_tokens: 1 } }),
    },
    {
      what: 'max_tokens 1, stream false, content as parts',
      api: 'deepseek',
      body: deepseekBody({
        max_tokens: 1,
        stream: false,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      }),
    },
    {
      what: "max_tokens at V4's limit, top_p 1",
      api: 'deepseek',
      body: deepseekBody({ max_tokens: 393_216, top_p: 1 }),
    },
    {
      what: 'temperature 3 and a penalty of 5 in thinking mode (ignored, not refused)',
      api: 'deepseek',
      body: deepseekBody({ temperature: 3, presence_penalty: 5 }),
    },
    {
      what: 'temperature 2 and penalties of ±2 outside thinking mode',
      api: 'deepseek',
      body: deepseekBody({
        thinking: { type: 'disabled' },
        temperature: 2,
        presence_penalty: -2,
        frequency_penalty: 2,
      }),
    },
    {
      what: 'penalties of ±2 and n 1',
      api: 'chat',
      body: chatBody({ presence_penalty: -2, frequency_penalty: 2, n: 1 }),
    },
    {
      what: 'top_k 0, system blocks, stop sequences',
      api: 'anthropic',
      body: anthropicBody({
        top_k: 0,
        system: [{ type: 'text', text: 'Be brief.' }],
        stop_sequences: ['END'],
      }),
    },
    {
      what: 'a systemInstruction, topK as a numeric string',
      api: 'gemini',
      body: geminiBody({
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        generationConfig: { topK: '40' },
      }),
    },
    {
      what: 'system blocks, stop sequences, a named tool',
      api: 'bedrock',
      body: {
        ...bedrockBody({ maxTokens: 64, stopSequences: ['END'] }),
        system: [{ text: 'Be brief.' }],
        toolConfig: { tools: [{ toolSpec: { name: 'read', inputSchema: { json: { type: 'object' } } } }] },
      },
    },
    {
      what: 'maxTokens 1, temperature 1, topP 0',
      api: 'bedrock',
      body: bedrockBody({ maxTokens: 1, temperature: 1, topP: 0 }),
    },
  ]
  it.each(ACCEPTED)('$api answers $what', async ({ api, body }) => {
    const answer = await send(strict, api, body)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  })
})
