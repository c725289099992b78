// PLACEHOLDER (being written this session): the gemini-cli transcript reader.

import { CachelabError } from '../../harness/errors.ts'
import type { ObservedRequest, ReadOptions } from './types.ts'

export async function* readGeminiCli(file: string, _options: ReadOptions): AsyncIterable<ObservedRequest> {
  yield* []
  throw new CachelabError('input', `${file}: the gemini-cli reader is not written yet`)
}
