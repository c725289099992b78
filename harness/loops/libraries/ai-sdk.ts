// Placeholder until the ai-sdk loop lands: loading it says so.

import type { LibraryLoop } from './types.ts'

export function aiSdkLoop(): LibraryLoop {
  throw new Error('the ai-sdk loop is not built yet')
}
