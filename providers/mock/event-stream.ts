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
