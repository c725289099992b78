// Kilo Code, an opencode fork: `user-agent: Kilo-Code/<version> …` (and `x-title: Kilo Code`), then
// opencode's session headers and side prompts (opencode.ts). Its compaction is its own: Kilo's system
// prompt, no tools, and the conversation as the text of one user message.

import { lastUserText } from '../../../../providers/wire/wire-text.ts'
import { readOpencodeFamily } from './opencode.ts'
import type { AgentPort, AgentReading, WireRequest } from './types.ts'

const USER_AGENT = /^Kilo-Code\/([0-9][^\s]*)/

/** How Kilo 7.7.7's compaction request hands the model the conversation to summarize. */
const COMPACTION = 'Here is the conversation so far:'

export const kilo: AgentPort = {
  name: 'kilo',
  read(request: WireRequest): AgentReading | undefined {
    const agent = USER_AGENT.exec(request.headers['user-agent'] ?? '')
    if (agent === null) return undefined
    const reading = readOpencodeFamily('kilo', agent[1], request)
    return lastUserText(request.body).startsWith(COMPACTION)
      ? { ...reading, kind: 'compaction', purpose: 'summary' }
      : reading
  },
}
