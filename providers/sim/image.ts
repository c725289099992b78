// Image sizes and the token prices providers put on them: read from the PNG header of the payload,
// so an image costs what its pixels cost whichever wire API carried it.

/** Pixel size of a base64 PNG (or data URL); undefined when the payload is not a PNG. */
export function pngSize(payload: string): { width: number; height: number } | undefined {
  const base64 = payload.startsWith('data:') ? payload.slice(payload.indexOf(',') + 1) : payload
  const head = Buffer.from(base64.slice(0, 44), 'base64')
  if (head.length < 24 || head.readUInt32BE(0) !== 0x89504e47) return undefined
  return { width: head.readUInt32BE(16), height: head.readUInt32BE(20) }
}

/** Anthropic's published estimate: width × height / 750, after fitting the long side to 1568 px. */
export function anthropicImageTokens(size: { width: number; height: number }): number {
  const fit = Math.min(1, 1568 / Math.max(size.width, size.height))
  return Math.ceil((Math.round(size.width * fit) * Math.round(size.height * fit)) / 750)
}

/** OpenAI's tile rule: fit in 2048², shortest side to 768, 170 per 512-px tile plus 85 (85 at low detail). */
export function openaiImageTokens(
  size: { width: number; height: number },
  detail: string | undefined,
): number {
  if (detail === 'low') return 85
  let { width, height } = size
  const fit = Math.min(1, 2048 / Math.max(width, height))
  width *= fit
  height *= fit
  const shrink = Math.min(1, 768 / Math.min(width, height))
  width *= shrink
  height *= shrink
  return 85 + 170 * Math.ceil(width / 512) * Math.ceil(height / 512)
}

/** Tokens charged for an image whose size is unknown. */
export const UNKNOWN_IMAGE_TOKENS = 765
