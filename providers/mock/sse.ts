// Server-sent events as a ReadableStream, the way the real APIs frame them: `event:` lines where the
// API names events (Anthropic, Responses), bare `data:` lines otherwise (Chat Completions).

/** One SSE frame. */
export interface SseFrame {
  event?: string
  data: string
}

/**
 * Encode frames, each `data` line by line (one `data:` line per line of it, as the SSE format requires).
 * With `cutAfter`, the connection drops (the stream errors) after that many frames, or after the last
 * frame when there are no more: a cut fault always fails the stream, whole or not, and never becomes a
 * clean end.
 */
export function sseStream(
  frames: readonly SseFrame[],
  options: { cutAfter?: number } = {},
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let index = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const frame = frames[index]
      if (options.cutAfter !== undefined && (index >= options.cutAfter || frame === undefined)) {
        controller.error(new Error('connection reset by the mock provider'))
        return
      }
      if (frame === undefined) {
        controller.close()
        return
      }
      index += 1
      controller.enqueue(encoder.encode(encodeFrame(frame)))
    },
  })
}

/** One frame as SSE text: its `event:` line if named, a `data:` line per line of data, a blank line. */
function encodeFrame(frame: SseFrame): string {
  const head = frame.event === undefined ? '' : `event: ${frame.event}\n`
  const data = frame.data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join('')
  return `${head}${data}\n`
}

/** Split text into deterministic delta pieces. */
export function textPieces(text: string, size = 24): string[] {
  const pieces: string[] = []
  for (let start = 0; start < text.length; start += size) pieces.push(text.slice(start, start + size))
  return pieces
}
