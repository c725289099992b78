// opencode on Chat Completions or the Responses API (notes/2026-12-01-conversations.md): `user-agent:
// opencode/<version> …`; its session in `x-session-id` on every request; a subagent's requests carry
// their own session there and the parent's in `x-parent-session-id`; the title and compaction requests
// are told by their system prompts.

import { systemText } from '../../../../providers/wire/wire-text.ts'
import type { AgentPort, AgentReading, WireRequest } from './types.ts'

const USER_AGENT = /^opencode\/([0-9][^\s]*)/

export const opencode: AgentPort = {
  name: 'opencode',
  read(request: WireRequest): AgentReading | undefined {
    const { headers } = request
    const agent = USER_AGENT.exec(headers['user-agent'] ?? '')
    if (agent === null && headers.originator !== 'opencode') return undefined
    const own = headers['x-session-id'] ?? headers['session-id']
    const parent = headers['x-parent-session-id']
    const system = systemText(request.api, request.body).trimStart()
    const side = system.startsWith('You are a title generator')
      ? ({ kind: 'side', purpose: 'title' } as const)
      : system.startsWith('You are a context summarization agent')
        ? ({ kind: 'compaction', purpose: 'summary' } as const)
        : undefined
    const session = parent ?? own
    return {
      agent: 'opencode',
      ...(agent?.[1] !== undefined ? { version: agent[1] } : {}),
      ...(session !== undefined ? { session } : {}),
      ...(parent !== undefined && own !== undefined ? { key: own } : {}),
      ...(side ?? { kind: parent !== undefined ? ('subagent' as const) : ('main' as const) }),
    }
  },
}
