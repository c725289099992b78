// The transcript readers by format and format detection: what `cachelab import` reads with. Each reader's
// module is loaded when it first reads a file, so an import of one agent's files loads no other agent's
// reader (nor what they need: request rebuilding, the Gemini adapter, SQLite). The simulator's
// prediction of the requests a transcript holds whole is replay.ts's `predictObserved`, apart so that
// reading loads no simulator (nor its tokenizer) for files without request bodies.

import type { TranscriptFormat, TranscriptReader } from './types.ts'

export { detectFormat } from './detect.ts'

/** A reader whose module `load` brings in on its first file. */
function loadedOnFirstRead(load: () => Promise<TranscriptReader>): TranscriptReader {
  let reader: Promise<TranscriptReader> | undefined
  return async function* (file, options) {
    reader ??= load()
    yield* (await reader)(file, options)
  }
}

/** The reader of each format. */
export const READERS: Readonly<Record<TranscriptFormat, TranscriptReader>> = {
  'claude-code': loadedOnFirstRead(async () => (await import('./claude-code.ts')).readClaudeCode),
  cline: loadedOnFirstRead(async () => (await import('./cline.ts')).readCline),
  codex: loadedOnFirstRead(async () => (await import('./codex.ts')).readCodex),
  copilot: loadedOnFirstRead(async () => (await import('./copilot.ts')).readCopilot),
  droid: loadedOnFirstRead(async () => (await import('./droid.ts')).readDroid),
  dsh: loadedOnFirstRead(async () => (await import('./dsh.ts')).readDsh),
  'gemini-cli': loadedOnFirstRead(async () => (await import('./gemini-cli.ts')).readGeminiCli),
  kilo: loadedOnFirstRead(async () => (await import('./kilo.ts')).readKilo),
  opencode: loadedOnFirstRead(async () => (await import('./opencode.ts')).readOpencode),
  pi: loadedOnFirstRead(async () => (await import('./pi.ts')).readPi),
  'qwen-code': loadedOnFirstRead(async () => (await import('./qwen-code.ts')).readQwenCode),
}
