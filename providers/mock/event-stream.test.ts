import { crc32 } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { decodeEventMessages, encodeEventMessage, eventMessage, exceptionMessage } from './event-stream.ts'

const joined = (parts: readonly Uint8Array[]) => new Uint8Array(Buffer.concat(parts))

/** A message with one header of each non-string type before a string one, as other AWS streams send. */
function withOtherHeaders(): Uint8Array {
  const headers = Buffer.concat([
    Buffer.from([4, ...Buffer.from('flag'), 0]),
    Buffer.from([4, ...Buffer.from('long'), 5, 0, 0, 0, 0, 0, 0, 0, 9]),
    Buffer.from([5, ...Buffer.from('bytes'), 6, 0, 2, 0xff, 0xfe]),
    Buffer.from([4, ...Buffer.from('uuid'), 9, ...new Array(16).fill(1)]),
    Buffer.from([11, ...Buffer.from(':event-type'), 7, 0, 8, ...Buffer.from('metadata')]),
  ])
  const payload = Buffer.from('{"usage":{"inputTokens":3}}')
  const total = 12 + headers.length + payload.length + 4
  const bytes = Buffer.alloc(total)
  bytes.writeUInt32BE(total, 0)
  bytes.writeUInt32BE(headers.length, 4)
  bytes.writeUInt32BE(crc32(bytes.subarray(0, 8)), 8)
  headers.copy(bytes, 12)
  payload.copy(bytes, 12 + headers.length)
  bytes.writeUInt32BE(crc32(bytes.subarray(0, total - 4)), total - 4)
  return new Uint8Array(bytes)
}

describe('reading an event stream back', () => {
  it('gives each message its string headers and payload, in order', () => {
    const messages = [
      eventMessage('messageStart', { role: 'assistant' }),
      eventMessage('contentBlockDelta', { delta: { text: 'é ✓' } }),
      exceptionMessage('throttlingException', 'slow down'),
    ]
    expect(decodeEventMessages(joined(messages.map(encodeEventMessage)))).toEqual(messages)
  })

  it('passes over header values of the other types', () => {
    expect(decodeEventMessages(withOtherHeaders())).toEqual([
      { headers: { ':event-type': 'metadata' }, payload: '{"usage":{"inputTokens":3}}' },
    ])
  })

  it('stops at a message cut short or whose checksum does not match', () => {
    const first = encodeEventMessage(eventMessage('messageStart', { role: 'assistant' }))
    const second = encodeEventMessage(eventMessage('messageStop', { stopReason: 'end_turn' }))
    expect(decodeEventMessages(joined([first, second.subarray(0, second.length - 1)]))).toHaveLength(1)
    const damaged = second.slice()
    damaged[20] = (damaged[20] ?? 0) ^ 1
    expect(decodeEventMessages(joined([first, damaged, first]))).toHaveLength(1)
    const badPrelude = second.slice()
    badPrelude[9] = (badPrelude[9] ?? 0) ^ 1
    expect(decodeEventMessages(joined([badPrelude, first]))).toEqual([])
  })
})
