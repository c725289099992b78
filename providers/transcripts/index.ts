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
 * The simulator's read and write for each request that carries its body (DSH logs, Codex rollouts that
 * recorded their base instructions), replayed in time order with each session's previous request;
 * requests without a body (or that the simulator refuses) are left out.
 */
export function predictObserved(
  requests: readonly ObservedRequest[],
): Map<ObservedRequest, { read: number; write: number }> {
  const predicted = new Map<ObservedRequest, { read: number; write: number }>()
  if (!requests.some((request) => request.request !== undefined)) return predicted
  for (const [index, replayed] of replayObserved(requests).entries()) {
    const request = requests[index]
    if (request !== undefined && replayed.predicted !== undefined)
      predicted.set(request, { read: replayed.predicted.read, write: replayed.predicted.write })
  }
  return predicted
}
