import { Stream } from '@anthropic-ai/sdk/core/streaming'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { handleChat } from './chat.ts'
import { MockContext } from './context.ts'
import { toResponse } from './request.ts'
import { type SseFrame, sseStream, textPieces } from './sse.ts'

const text = (stream: ReadableStream<Uint8Array>) => new Response(stream).text()

/** Frames back from SSE text, split on blank lines the way a client does. */
function parseFrames(body: string): SseFrame[] {
  expect(body.endsWith('\n\n')).toBe(true)
  return body
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const lines = block.split('\n')
      const event = lines.length === 2 ? lines[0]?.replace(/^event: /, '') : undefined
      return { ...(event !== undefined ? { event } : {}), data: lines.at(-1)?.replace(/^data: /, '') ?? '' }
    })
}

/** Every read of a stream until it ends or errors: frames as text, then the error's message if any. */
async function reads(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  const seen: string[] = []
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read())
      seen.push(decoder.decode(next.value))
    seen.push('end')
  } catch (error) {
    seen.push(`error: ${(error as Error).message}`)
  }
  return seen
}

const frames: SseFrame[] = [
  { event: 'message_start', data: '{"type":"message_start"}' },
  { data: '{"id":"chatcmpl-1"}' },
  { event: 'ping', data: '{"type": "ping"}' },
]

describe('sseStream', () => {
  it('frames an event line where the API names events, a bare data line otherwise, each ended by a blank line', async () => {
    expect(await text(sseStream(frames))).toBe(
      'event: message_start\ndata: {"type":"message_start"}\n\n' +
        'data: {"id":"chatcmpl-1"}\n\n' +
        'event: ping\ndata: {"type": "ping"}\n\n',
    )
  })

  it('reads back frame for frame when split on blank lines', async () => {
    expect(parseFrames(await text(sseStream(frames)))).toEqual(frames)
  })

  it('is read back exactly by the SDK event decoder, for any single-line data and event names', async () => {
    const line = fc.string({ unit: 'grapheme', maxLength: 40 }).filter((value) => !/[\r\n]/.test(value))
    const name = fc.stringMatching(/^[a-z][a-z_.]{0,20}$/)
    const frame = fc.record({ event: name, data: line }, { requiredKeys: ['data'] })
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { maxLength: 6 }), async (sent) => {
        const decoded: SseFrame[] = []
        for await (const event of Stream.rawEvents(new Response(sseStream(sent)))) {
          decoded.push({ ...(event.event !== null ? { event: event.event } : {}), data: event.data })
        }
        expect(decoded).toEqual(sent)
      }),
      { numRuns: 60, seed: 11 },
    )
  })

  it('delivers one whole frame per read and then ends', async () => {
    expect(await reads(sseStream(frames))).toEqual([
      'event: message_start\ndata: {"type":"message_start"}\n\n',
      'data: {"id":"chatcmpl-1"}\n\n',
      'event: ping\ndata: {"type": "ping"}\n\n',
      'end',
    ])
  })

  it('drops the connection after cutAfter whole frames', async () => {
    const seen = await reads(sseStream(frames, { cutAfter: 2 }))
    expect(seen).toHaveLength(3)
    expect(seen.at(-1)).toBe('error: connection reset by the mock provider')
    expect(await reads(sseStream(frames, { cutAfter: 0 }))).toEqual([
      'error: connection reset by the mock provider',
    ])
  })

  it('drops the connection after the last frame when the cut falls at or past it, never ending cleanly', async () => {
    const whole = await reads(sseStream(frames))
    const dropped = [...whole.slice(0, -1), 'error: connection reset by the mock provider']
    for (const cutAfter of [3, 4, 100]) expect(await reads(sseStream(frames, { cutAfter }))).toEqual(dropped)
    expect(await reads(sseStream([], { cutAfter: 1 }))).toEqual([
      'error: connection reset by the mock provider',
    ])
  })

  it('sends each line of a multi-line data value as its own data line', async () => {
    expect(await text(sseStream([{ event: 'note', data: 'one\ntwo\n\nfour' }, { data: 'a\r\nb\rc' }]))).toBe(
      'event: note\ndata: one\ndata: two\ndata: \ndata: four\n\n' + 'data: a\ndata: b\ndata: c\n\n',
    )
  })

  it('is read back exactly by the SDK event decoder, for data of any number of lines', async () => {
    const line = fc.string({ unit: 'grapheme', maxLength: 20 }).filter((value) => !/[\r\n]/.test(value))
    const data = fc.array(line, { minLength: 1, maxLength: 4 }).map((lines) => lines.join('\n'))
    const frame = fc.record({ event: fc.constantFrom('delta', 'ping'), data }, { requiredKeys: ['data'] })
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { maxLength: 4 }), async (sent) => {
        const decoded: SseFrame[] = []
        for await (const event of Stream.rawEvents(new Response(sseStream(sent)))) {
          decoded.push({ ...(event.event !== null ? { event: event.event } : {}), data: event.data })
        }
        expect(decoded).toEqual(sent)
      }),
      { numRuns: 60, seed: 13 },
    )
  })

  it('ends at once with no frames', async () => {
    expect(await text(sseStream([]))).toBe('')
  })
})

describe('the Chat Completions stream', () => {
  it('is bare data lines of chunks, closed by data: [DONE]', async () => {
    const request = new Request('https://api.openai.com/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-5.4',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    })
    const response = toResponse(await handleChat('openai', request, new MockContext()))
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const received = parseFrames(await response.text())
    expect(received.at(-1)).toEqual({ data: '[DONE]' })
    expect(received.every((frame) => frame.event === undefined)).toBe(true)
    const chunks = received.slice(0, -1).map((frame) => JSON.parse(frame.data) as Record<string, unknown>)
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true)
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } })
  })
})

describe('textPieces', () => {
  it('splits text into fixed-size pieces that join back to it', () => {
    expect(textPieces('abcdefg', 3)).toEqual(['abc', 'def', 'g'])
    expect(textPieces('', 3)).toEqual([])
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 30 }), (value, size) => {
        const pieces = textPieces(value, size)
        expect(pieces.join('')).toBe(value)
        expect(pieces.every((piece) => piece.length >= 1 && piece.length <= size)).toBe(true)
      }),
      { seed: 5 },
    )
  })
})
