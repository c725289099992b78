// Placeholder until the pi-ai loop lands: loading it says so.

import type { LibraryLoop } from './types.ts'

export function piAiLoop(): LibraryLoop {
  throw new Error('the pi-ai loop is not built yet')
}
