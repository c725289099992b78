import { describe, expect, it } from 'vitest'
import { encodeEventMessage, eventMessage, exceptionMessage } from './event-stream.ts'
import {
  answerFailureOf,
  answerText,
  apiError,
  apiOfPath,
  bodyInView,
  errorOf,
  normalize,
  sessionOf,
  usageFromResponse,
} from './exchange.ts'

describe('reading one exchange of the loopback server', () => {
  it('names the wire API of a path under its vendor, query and all, and nothing else', () => {
    expect(apiOfPath('anthropic', '/anthropic/v1/messages?beta=true')).toBe('anthropic-messages')
    expect(apiOfPath('openai', '/openai/v1/chat/completions')).toBe('openai-chat')
    expect(apiOfPath('deepseek', '/deepseek/chat/completions')).toBe('deepseek-chat')
    expect(apiOfPath('openai', '/openai/v1/responses')).toBe('openai-responses')
    expect(apiOfPath('openai', '/openai/v1/models')).toBeUndefined()
    expect(apiOfPath('deepseek', '/deepseek/messages')).toBeUndefined()
    expect(apiOfPath('bedrock', '/bedrock/model/anthropic.claude-sonnet-4-6/converse')).toBe(
      'bedrock-converse',
    )
    expect(apiOfPath('bedrock', '/bedrock/model/a.b%3A0/converse-stream?x=1')).toBe('bedrock-converse')
    expect(apiOfPath('bedrock', '/bedrock/model/anthropic.claude-sonnet-4-6/invoke')).toBeUndefined()
    expect(apiOfPath('openai', '/openai/v1/model/m/converse')).toBeUndefined()
  })

  it("puts a Converse request's model id, as its path names it, into the body", () => {
    const body = { messages: [] }
    expect(
      bodyInView('bedrock-converse', '/bedrock/model/arn%3Aaws%3Abedrock%2Fm/converse-stream', body),
    ).toEqual({
      modelId: 'arn:aws:bedrock/m',
      messages: [],
    })
    expect(bodyInView('bedrock-converse', '/bedrock/model/bad%zz/converse', body)).toMatchObject({
      modelId: 'bad%zz',
    })
    expect(bodyInView('openai-chat', '/openai/v1/chat/completions', body)).toBe(body)
  })

  it("reads an event-stream answer's usage as a server-sent stream's", () => {
    const bytes = Buffer.concat(
      [
        eventMessage('messageStart', { role: 'assistant' }),
        eventMessage('metadata', { usage: { inputTokens: 9, cacheReadInputTokens: 1604, outputTokens: 2 } }),
      ].map(encodeEventMessage),
    )
    const answer = answerText(bytes, 'application/vnd.amazon.eventstream')
    expect(answer.contentType).toBe('text/event-stream')
    expect(answer.text.split('\n\n')[0]).toBe('event: messageStart\ndata: {"role":"assistant"}')
    expect(normalize('bedrock', usageFromResponse(answer.text, answer.contentType) ?? {})).toMatchObject({
      input: 1613,
      cacheRead: 1604,
      output: 2,
    })
    expect(answerText(Buffer.from('{"a":"é"}'), 'application/json')).toEqual({
      text: '{"a":"é"}',
      contentType: 'application/json',
    })
  })

  it("takes a stream's final usage, Anthropic's message_delta counters over its message_start ones", () => {
    const frames = [
      {
        type: 'message_start',
        message: { usage: { input_tokens: 10, cache_read_input_tokens: 900, output_tokens: 1 } },
      },
      { type: 'message_delta', usage: { output_tokens: 42, cache_read_input_tokens: null } },
    ]
    const text = frames.map((frame) => `event: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`).join('')
    const raw = usageFromResponse(text, 'text/event-stream')
    expect(raw).toEqual({ input_tokens: 10, cache_read_input_tokens: 900, output_tokens: 42 })
    expect(normalize('anthropic', raw ?? {})).toMatchObject({
      input: 910,
      cacheRead: 900,
      uncached: 10,
      output: 42,
    })
    expect(usageFromResponse(JSON.stringify({ usage: { prompt_tokens: 5 } }), 'application/json')).toEqual({
      prompt_tokens: 5,
    })
  })

  it('tells a failure by status and error type, never by its message', () => {
    const body = JSON.stringify({
      error: { type: 'rate_limit_error', message: 'key sk-secret is over its limit' },
    })
    expect(errorOf(429, body)).toBe('HTTP 429 rate_limit_error')
    expect(errorOf(502, '<html>bad gateway</html>')).toBe('HTTP 502')
    expect(apiError('anthropic', 400, 'no').body).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'no' },
    })
    expect(apiError('openai', 400, 'no').body).toMatchObject({
      error: { type: 'invalid_request_error', param: null, code: null },
    })
  })

  it("puts a server-side error in each vendor's own envelope", () => {
    expect(apiError('anthropic', 404, 'gone').body).toEqual({
      type: 'error',
      error: { type: 'not_found_error', message: 'gone' },
    })
    expect(apiError('anthropic', 413, 'big').body).toMatchObject({ error: { type: 'request_too_large' } })
    expect(apiError('gemini', 413, 'big').body).toEqual({
      error: { code: 413, message: 'big', status: 'INVALID_ARGUMENT' },
    })
    expect(apiError('gemini', 503, 'later').body).toMatchObject({ error: { status: 'UNAVAILABLE' } })
    const bedrock = apiError('bedrock', 404, 'gone')
    expect(bedrock.body).toEqual({ message: 'gone' })
    expect(bedrock.headers['x-amzn-errortype']).toMatch(/^ResourceNotFoundException:/)
    expect(apiError('deepseek', 500, 'oops').body).toEqual({
      error: { message: 'oops', type: 'server_error', param: null, code: null },
    })
    expect(apiError('anthropic', 429, 'slow', 'rate_limit_error').body).toMatchObject({
      error: { type: 'rate_limit_error' },
    })
  })

  it('keys a bare request by its session header, else its cache key, else its start', () => {
    const body = { system: 'S', messages: [{ role: 'user', content: 'hi' }] }
    expect(sessionOf(new Headers({ 'x-cachelab-session': 'run-1' }), body)).toBe('run-1')
    expect(sessionOf(new Headers(), { ...body, prompt_cache_key: 'k' })).toBe('k')
    expect(sessionOf(new Headers(), body)).toBe(sessionOf(new Headers(), { ...body, max_tokens: 9 }))
    expect(sessionOf(new Headers(), body)).not.toBe(sessionOf(new Headers(), { ...body, system: 'T' }))
  })
})

describe("a stream's failure after its 200", () => {
  const sse = (...frames: Array<[string | undefined, unknown]>) =>
    frames
      .map(
        ([event, data]) =>
          `${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`,
      )
      .join('')

  it("names each API's in-band error by its type, never by its message", () => {
    const secretMessage = 'your prompt mentioned sk-live-0123456789'
    const cases: Array<[string, string]> = [
      [
        sse(
          ['message_start', { type: 'message_start', message: { usage: { input_tokens: 9 } } }],
          ['error', { type: 'error', error: { type: 'overloaded_error', message: secretMessage } }],
        ),
        'error event in the stream: overloaded_error',
      ],
      [
        sse(['error', { type: 'error', code: 'rate_limit_exceeded', message: secretMessage, param: null }]),
        'error event in the stream: rate_limit_exceeded',
      ],
      [
        sse([
          'response.failed',
          { type: 'response.failed', response: { error: { code: 'server_error', message: secretMessage } } },
        ]),
        'error event in the stream: server_error',
      ],
      [
        sse(
          [undefined, { choices: [{ delta: { content: 'Hi' } }] }],
          [undefined, { error: { message: secretMessage, type: 'server_error' } }],
        ),
        'error event in the stream: server_error',
      ],
      [
        sse([undefined, { error: { code: 500, message: secretMessage, status: 'INTERNAL' } }]),
        'error event in the stream: INTERNAL',
      ],
      // A type that is not a plain name is left out.
      [sse(['error', { type: 'error', error: { type: secretMessage } }]), 'error event in the stream'],
    ]
    for (const [text, failure] of cases) {
      expect(answerFailureOf(text, 'text/event-stream; charset=utf-8')).toBe(failure)
      expect(answerFailureOf(text.replaceAll('\n', '\r\n'), 'text/event-stream')).toBe(failure)
    }
  })

  it("reads a ConverseStream's exception or error message as the capture decodes it", () => {
    const exception = answerText(
      Buffer.concat(
        [
          eventMessage('messageStart', { role: 'assistant' }),
          exceptionMessage('throttlingException', 'slow down'),
        ].map(encodeEventMessage),
      ),
      'application/vnd.amazon.eventstream',
    )
    expect(answerFailureOf(exception.text, exception.contentType)).toBe(
      'error event in the stream: throttlingException',
    )
    const error = answerText(
      encodeEventMessage({
        headers: { ':message-type': 'error', ':error-code': 'InternalFailure', ':error-message': 'x' },
        payload: '',
      }),
      'application/vnd.amazon.eventstream',
    )
    expect(answerFailureOf(error.text, error.contentType)).toBe('error event in the stream: InternalFailure')
  })

  it('finds none in a whole stream, in text that mentions errors, or in a JSON body', () => {
    const whole = sse(
      ['message_start', { type: 'message_start', message: { usage: { input_tokens: 9 } } }],
      [
        'content_block_delta',
        { type: 'content_block_delta', delta: { type: 'text_delta', text: '{"error": {"type": "x"}}' } },
      ],
      ['message_stop', { type: 'message_stop' }],
    )
    expect(answerFailureOf(whole, 'text/event-stream')).toBeUndefined()
    expect(
      answerFailureOf(`${sse([undefined, { choices: [] }])}data: [DONE]\n\n`, 'text/event-stream'),
    ).toBeUndefined()
    expect(
      answerFailureOf('{"id":"resp_1","status":"completed","error":null}', 'application/json'),
    ).toBeUndefined()
    expect(answerFailureOf('not json', 'application/json')).toBeUndefined()
    expect(answerFailureOf('{"error":{"type":"x"}}', 'text/plain')).toBeUndefined()
  })

  it("names an error a JSON answer holds: OpenRouter's after the model started, a failed Responses response", () => {
    expect(
      answerFailureOf('{"error":{"code":502,"message":"upstream said sk-0123456789"}}', 'application/json'),
    ).toBe('error in the answer: 502')
    expect(
      answerFailureOf(
        '{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"m"}}',
        'application/json; charset=utf-8',
      ),
    ).toBe('error in the answer: server_error')
    // Gemini's stream without alt=sse is one JSON array; an error may end it.
    expect(
      answerFailureOf('[{"candidates":[]},{"error":{"code":500,"status":"INTERNAL"}}]', 'application/json'),
    ).toBe('error in the answer: INTERNAL')
    expect(answerFailureOf('{"error":{"code":1.5}}', 'application/json')).toBe('error in the answer')
  })
})
