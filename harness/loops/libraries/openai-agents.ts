// Placeholder until the openai-agents loop lands: loading it says so.

import type { LibraryLoop } from './types.ts'

export function openAiAgentsLoop(): LibraryLoop {
  throw new Error('the openai-agents loop is not built yet')
}
