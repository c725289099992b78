// AWS event-stream framing (`application/vnd.amazon.eventstream`), as ConverseStream answers: each message
// is a prelude (total and header lengths, their CRC32), string headers, a JSON payload and a CRC32 of the
// whole message. The AWS SDKs check both checksums, so the mock computes them as the service does.

import { crc32 } from 'node:zlib'

/** One event-stream message: its string headers (`:event-type`, `:message-type`, …) and its payload. */
export interface EventMessage {
  headers: Readonly<Record<string, string>>
  payload: string
}

/** Header value type 7: a UTF-8 string with a 2-byte length. */
const STRING_TYPE = 7

/** Encode one message with both CRC32 checksums (prelude, then the whole message). */
export function encodeEventMessage(message: EventMessage): Uint8Array {
  const encoder = new TextEncoder()
  const headerParts: Uint8Array[] = []
  for (const [name, value] of Object.entries(message.headers)) {
    const nameBytes = encoder.encode(name)
    const valueBytes = encoder.encode(value)
    const part = new Uint8Array(1 + nameBytes.length + 1 + 2 + valueBytes.length)
    const view = new DataView(part.buffer)
    part[0] = nameBytes.length
    part.set(nameBytes, 1)
    part[1 + nameBytes.length] = STRING_TYPE
    view.setUint16(2 + nameBytes.length, valueBytes.length)
    part.set(valueBytes, 4 + nameBytes.length)
    headerParts.push(part)
  }
  const headersLength = headerParts.reduce((sum, part) => sum + part.length, 0)
  const payload = encoder.encode(message.payload)
  const total = 12 + headersLength + payload.length + 4
  const bytes = new Uint8Array(total)
  const view = new DataView(bytes.buffer)
  view.setUint32(0, total)
  view.setUint32(4, headersLength)
  view.setUint32(8, crc32(bytes.subarray(0, 8)))
  let offset = 12
  for (const part of headerParts) {
    bytes.set(part, offset)
    offset += part.length
  }
  bytes.set(payload, offset)
  view.setUint32(total - 4, crc32(bytes.subarray(0, total - 4)))
  return bytes
}

/** An event of the stream: `:message-type` event, JSON content. */
export function eventMessage(type: string, payload: Record<string, unknown>): EventMessage {
  return {
    headers: { ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' },
    payload: JSON.stringify(payload),
  }
}

/** An exception inside the stream (`:message-type` exception), as the service sends a mid-stream error. */
export function exceptionMessage(type: string, message: string): EventMessage {
  return {
    headers: { ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' },
    payload: JSON.stringify({ message }),
  }
}

/** A byte stream of the messages, one chunk each; `cutAfter` resets the connection after that many. */
export function eventStream(
  messages: readonly EventMessage[],
  options: { cutAfter?: number } = {},
): ReadableStream<Uint8Array> {
  let index = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const message = messages[index]
      if (options.cutAfter !== undefined && (index >= options.cutAfter || message === undefined)) {
        controller.error(new Error('connection reset by the mock provider'))
        return
      }
      if (message === undefined) {
        controller.close()
        return
      }
      index += 1
      controller.enqueue(encodeEventMessage(message))
    },
  })
}

/** The content type of an event-stream answer. */
export const EVENT_STREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream'

/** Bytes a header value of each type takes after its type byte; -1: a 2-byte length, then that many. */
const HEADER_VALUE_BYTES: Readonly<Record<number, number>> = {
  0: 0,
  1: 0,
  2: 1,
  3: 2,
  4: 4,
  5: 8,
  6: -1,
  7: -1,
  8: 8,
  9: 16,
}

/**
 * The messages of an event-stream answer, in order: their string headers (other header types are passed
 * over) and their payloads as UTF-8. Reading stops at the first message that is not whole or whose
 * checksums do not match, as a client's decoder would give up there (a stream cut mid-message).
 */
export function decodeEventMessages(bytes: Uint8Array): EventMessage[] {
  const messages: EventMessage[] = []
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const decoder = new TextDecoder()
  let offset = 0
  while (offset + 16 <= bytes.length) {
    const total = view.getUint32(offset)
    const headersLength = view.getUint32(offset + 4)
    if (total < 16 || headersLength > total - 16 || offset + total > bytes.length) break
    if (view.getUint32(offset + 8) !== crc32(bytes.subarray(offset, offset + 8))) break
    if (view.getUint32(offset + total - 4) !== crc32(bytes.subarray(offset, offset + total - 4))) break
    const headers: Record<string, string> = {}
    let at = offset + 12
    const headersEnd = at + headersLength
    while (at < headersEnd) {
      const nameLength = bytes[at] as number
      const name = decoder.decode(bytes.subarray(at + 1, at + 1 + nameLength))
      const type = bytes[at + 1 + nameLength] as number
      at += 2 + nameLength
      const fixed = HEADER_VALUE_BYTES[type]
      if (fixed === undefined) break
      if (fixed >= 0) at += fixed
      else {
        const length = view.getUint16(at)
        if (type === STRING_TYPE) headers[name] = decoder.decode(bytes.subarray(at + 2, at + 2 + length))
        at += 2 + length
      }
    }
    messages.push({ headers, payload: decoder.decode(bytes.subarray(headersEnd, offset + total - 4)) })
    offset += total
  }
  return messages
}
