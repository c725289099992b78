// opencode on Chat Completions or the Responses API (notes/2026-12-01-conversations.md): `user-agent:
// opencode/<version> …`; its session in `x-session-id` on every request; a subagent's requests carry
// their own session there and the parent's in `x-parent-session-id`; the title and compaction requests
// are told by their system prompts. Its fork Kilo Code sends the same (kilo.ts) under its own user agent.

import { systemText } from '../../../../providers/wire/wire-text.ts'
import type { AgentPort, AgentReading, WireRequest } from './types.ts'

const USER_AGENT = /^opencode\/([0-9][^\s]*)/

/** What opencode's headers and prompts say of a request, for the agent (opencode or a fork) that sent it. */
export function readOpencodeFamily(
  agent: string,
  version: string | undefined,
  request: WireRequest,
): AgentReading {
  const { headers } = request
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
    agent,
    ...(version !== undefined ? { version } : {}),
    ...(session !== undefined ? { session } : {}),
    ...(parent !== undefined && own !== undefined ? { key: own } : {}),
    ...(side ?? { kind: parent !== undefined ? ('subagent' as const) : ('main' as const) }),
  }
}

export const opencode: AgentPort = {
  name: 'opencode',
  read(request: WireRequest): AgentReading | undefined {
    const agent = USER_AGENT.exec(request.headers['user-agent'] ?? '')
    if (agent === null && request.headers.originator !== 'opencode') return undefined
    return readOpencodeFamily('opencode', agent?.[1], request)
  },
}
