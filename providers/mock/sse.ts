// Server-sent events as a ReadableStream, the way the real APIs frame them: `event:` lines where the
// API names events (Anthropic, Responses), bare `data:` lines otherwise (Chat Completions).

/** One SSE frame. */
export interface SseFrame {
  event?: string
  data: string
}

/** Encode frames; with `cutAfter`, the stream errors after that many frames (a connection dropped mid-way). */
export function sseStream(
  frames: readonly SseFrame[],
  options: { cutAfter?: number } = {},
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let index = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (options.cutAfter !== undefined && index >= options.cutAfter) {
        controller.error(new Error('connection reset by the mock provider'))
        return
      }
      const frame = frames[index]
      if (frame === undefined) {
        controller.close()
        return
      }
      index += 1
      const head = frame.event === undefined ? '' : `event: ${frame.event}\n`
      controller.enqueue(encoder.encode(`${head}data: ${frame.data}\n\n`))
    },
  })
}

/** Split text into deterministic delta pieces. */
export function textPieces(text: string, size = 24): string[] {
  const pieces: string[] = []
  for (let start = 0; start < text.length; start += size) pieces.push(text.slice(start, start + size))
  return pieces
}
