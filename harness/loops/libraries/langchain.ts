// Placeholder until the langchain loop lands: loading it says so.

import type { LibraryLoop } from './types.ts'

export function langchainLoop(): LibraryLoop {
  throw new Error('the langchain loop is not built yet')
}
