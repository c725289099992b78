import { describe, expect, it } from 'vitest'
import type { AssistantMessage } from '../../harness/types.ts'
import { handleMessages } from '../mock/anthropic.ts'
import { handleConverse } from '../mock/bedrock.ts'
import { handleChat } from '../mock/chat.ts'
import { MockContext } from '../mock/context.ts'
import { answerText } from '../mock/exchange.ts'
import { handleGeminiModelCall } from '../mock/gemini.ts'
import { toResponse } from '../mock/request.ts'
import { handleResponses } from '../mock/responses.ts'
import { encodeScript, SCRIPT_HEADER } from '../mock/script.ts'
import type { BuiltInWireApi } from '../types.ts'
import { answerOf, errorMessageOf } from './output.ts'

const answer: AssistantMessage = {
  role: 'assistant',
  content: [
    { type: 'text', text: 'Looking it up, one moment.' },
    { type: 'tool-call', callId: 'call_abc', name: 'lookup', arguments: '{"station":"EDDB","days":2}' },
  ],
}

const bodies: Record<BuiltInWireApi, Record<string, unknown>> = {
  'anthropic-messages': {
    model: 'claude-sonnet-4-6',
    max_tokens: 256,
    messages: [{ role: 'user', content: 'hi' }],
  },
  'openai-chat': { model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] },
  'deepseek-chat': { model: 'deepseek-flash', messages: [{ role: 'user', content: 'hi' }] },
  'openai-responses': { model: 'gpt-5.4', input: 'hi' },
  'gemini-generate': { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
  'bedrock-converse': { messages: [{ role: 'user', content: [{ text: 'hi' }] }] },
}

/**
 * The mock's own response to a request scripted with `answer`: the text and content type as sent, a
 * ConverseStream's event-stream bytes read as the capture reads them (`answerText`).
 */
async function rendered(api: keyof typeof bodies, stream: boolean): Promise<{ text: string; type: string }> {
  const context = new MockContext()
  const request = new Request('https://example.test/', {
    method: 'POST',
    headers: { [SCRIPT_HEADER]: encodeScript(answer) },
    body: JSON.stringify({ ...bodies[api], ...(stream ? { stream: true } : {}) }),
  })
  const geminiCall = `gemini-2.5-flash:${stream ? 'streamGenerateContent' : 'generateContent'}`
  const served =
    api === 'bedrock-converse'
      ? await handleConverse(request, context, 'anthropic.claude-sonnet-4-6', stream)
      : api === 'gemini-generate'
        ? await handleGeminiModelCall(geminiCall, request, context)
        : api === 'anthropic-messages'
          ? await handleMessages(request, context)
          : api === 'openai-responses'
            ? await handleResponses(request, context)
            : await handleChat(api === 'openai-chat' ? 'openai' : 'deepseek', request, context)
  const response = toResponse(served)
  const read = answerText(
    new Uint8Array(await response.arrayBuffer()),
    response.headers.get('content-type') ?? '',
  )
  return { text: read.text, type: read.contentType }
}

describe("reading the model's answer back from a response", () => {
  for (const api of [
    'anthropic-messages',
    'openai-chat',
    'deepseek-chat',
    'openai-responses',
    'gemini-generate',
    'bedrock-converse',
  ] as const) {
    for (const stream of [false, true]) {
      it(`${api}, ${stream ? 'streamed' : 'not streamed'}: text and tool calls, ids and arguments as sent`, async () => {
        const { text, type } = await rendered(api, stream)
        const parsed = answerOf(api, text, type)
        expect(parsed?.content.find((block) => block.type === 'text')).toEqual(answer.content[0])
        const call = parsed?.content.find((block) => block.type === 'tool-call')
        expect(call).toMatchObject({ type: 'tool-call', callId: 'call_abc', name: 'lookup' })
        expect(JSON.parse((call as { arguments: string }).arguments)).toEqual({ station: 'EDDB', days: 2 })
      })
    }
  }

  it('finds no answer in a body that is not a response', () => {
    expect(answerOf('openai-chat', 'not json', 'application/json')).toBeUndefined()
  })
})

describe("an error response's message", () => {
  it("reads every vendor's envelope, on one line", () => {
    expect(
      errorMessageOf(
        JSON.stringify({
          error: { code: 400, message: 'Please ensure\n that…', status: 'INVALID_ARGUMENT' },
        }),
      ),
    ).toBe('Please ensure that…')
    expect(errorMessageOf('[{"error":{"message":"in an array"}}]')).toBe('in an array')
    expect(errorMessageOf('{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}')).toBe(
      'bad',
    )
    expect(errorMessageOf('{"message":"Bedrock style"}')).toBe('Bedrock style')
  })

  it('is undefined for a body that is not an error', () => {
    expect(errorMessageOf('data: {}')).toBeUndefined()
    expect(errorMessageOf('{"error":{"message":""}}')).toBeUndefined()
  })
})
