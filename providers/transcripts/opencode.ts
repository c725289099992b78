// PLACEHOLDER (being written this session): the opencode transcript reader.

import { CachelabError } from '../../harness/errors.ts'
import type { ObservedRequest, ReadOptions } from './types.ts'

export async function* readOpencode(file: string, _options: ReadOptions): AsyncIterable<ObservedRequest> {
  yield* []
  throw new CachelabError('input', `${file}: the opencode reader is not written yet`)
}
