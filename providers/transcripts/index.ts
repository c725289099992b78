// The transcript readers by format, format detection, and the simulator's prediction of the requests a
// transcript holds whole: what `cachelab import` reads with.

import { readClaudeCode } from './claude-code.ts'
import { readCodex } from './codex.ts'
import { readDsh } from './dsh.ts'
import { readGeminiCli } from './gemini-cli.ts'
import { readOpencode } from './opencode.ts'
import { readPi } from './pi.ts'
import { readQwenCode } from './qwen-code.ts'
import { replayObserved } from './replay.ts'
import type { ObservedRequest, TranscriptFormat, TranscriptReader } from './types.ts'

export { detectFormat } from './detect.ts'

/** The reader of each format. */
export const READERS: Readonly<Record<TranscriptFormat, TranscriptReader>> = {
  'claude-code': readClaudeCode,
  codex: readCodex,
  dsh: readDsh,
  'gemini-cli': readGeminiCli,
  opencode: readOpencode,
  pi: readPi,
  'qwen-code': readQwenCode,
}

/**
 * The simulator's read and write for each request that carries its whole body (DSH logs), replayed in
 * time order with each session's previous request; requests without a body, or whose body lacks the tool
 * schemas sent (Codex rollouts: `withoutTools`, their read short of the provider's by the tools), and
 * those the simulator refuses are left out.
 */
export function predictObserved(
  requests: readonly ObservedRequest[],
): Map<ObservedRequest, { read: number; write: number }> {
  const predicted = new Map<ObservedRequest, { read: number; write: number }>()
  const whole = requests.filter(
    (request) => request.request !== undefined && request.request.withoutTools !== true,
  )
  if (whole.length === 0) return predicted
  for (const [index, replayed] of replayObserved(whole).entries()) {
    const request = whole[index]
    if (request !== undefined && replayed.predicted !== undefined)
      predicted.set(request, { read: replayed.predicted.read, write: replayed.predicted.write })
  }
  return predicted
}
