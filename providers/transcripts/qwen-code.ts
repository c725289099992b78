// PLACEHOLDER (being written this session): the qwen-code transcript reader.

import { CachelabError } from '../../harness/errors.ts'
import type { ObservedRequest, ReadOptions } from './types.ts'

export async function* readQwenCode(file: string, _options: ReadOptions): AsyncIterable<ObservedRequest> {
  yield* []
  throw new CachelabError('input', `${file}: the qwen-code reader is not written yet`)
}
