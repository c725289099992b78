// Kilo Code, an opencode fork: `user-agent: Kilo-Code/<version> …` (and `x-title: Kilo Code`), then
// opencode's session headers and side prompts (opencode.ts).

import { readOpencodeFamily } from './opencode.ts'
import type { AgentPort, AgentReading, WireRequest } from './types.ts'

const USER_AGENT = /^Kilo-Code\/([0-9][^\s]*)/

export const kilo: AgentPort = {
  name: 'kilo',
  read(request: WireRequest): AgentReading | undefined {
    const agent = USER_AGENT.exec(request.headers['user-agent'] ?? '')
    if (agent === null) return undefined
    return readOpencodeFamily('kilo', agent[1], request)
  },
}
