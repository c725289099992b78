// The transcript readers by format and format detection: what `cachelab import` reads with. The
// simulator's prediction of the requests a transcript holds whole is replay.ts's `predictObserved`, apart
// so that reading loads no simulator (nor its tokenizer) for files without request bodies.

import { readClaudeCode } from './claude-code.ts'
import { readCodex } from './codex.ts'
import { readDsh } from './dsh.ts'
import { readGeminiCli } from './gemini-cli.ts'
import { readOpencode } from './opencode.ts'
import { readPi } from './pi.ts'
import { readQwenCode } from './qwen-code.ts'
import type { TranscriptFormat, TranscriptReader } from './types.ts'

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
