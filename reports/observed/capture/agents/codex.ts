// Codex CLI on the Responses API (notes/2026-12-01-conversations.md): `originator: codex_exec` and
// `user-agent: codex_exec/<version> …`; the session in `session-id` (and `prompt_cache_key`), each
// agent's own thread in `thread-id` (a subagent sends its parent's session and `x-openai-subagent`);
// `x-codex-turn-metadata` says `request_kind: compaction` for the request that compacts a conversation.

import { lastItemText } from '../../../../providers/wire/wire-text.ts'
import type { AgentPort, AgentReading, WireRequest } from './types.ts'

const USER_AGENT = /^(codex_[a-z_]+)\/([0-9][^\s]*)/

/** The `request_kind` of the turn metadata header, when it parses. */
function requestKind(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  try {
    const parsed = JSON.parse(header) as { request_kind?: unknown }
    return typeof parsed.request_kind === 'string' ? parsed.request_kind : undefined
  } catch {
    return undefined
  }
}

export const codex: AgentPort = {
  name: 'codex',
  read(request: WireRequest): AgentReading | undefined {
    if (request.api !== 'openai-responses') return undefined
    const { headers, body } = request
    const agent = USER_AGENT.exec(headers['user-agent'] ?? '')
    const originator = headers.originator ?? ''
    if (agent === null && !originator.startsWith('codex')) return undefined
    const cacheKey = typeof body.prompt_cache_key === 'string' ? body.prompt_cache_key : undefined
    const session = headers['session-id'] ?? headers.session_id ?? cacheKey
    const thread = headers['thread-id']
    const subagent =
      headers['x-openai-subagent'] !== undefined || (thread !== undefined && thread !== session)
    const compaction =
      requestKind(headers['x-codex-turn-metadata']) === 'compaction' ||
      lastItemText(body).trimStart().startsWith('You are performing a CONTEXT CHECKPOINT COMPACTION')
    return {
      agent: 'codex',
      ...(agent?.[2] !== undefined ? { version: agent[2] } : {}),
      ...(session !== undefined ? { session } : {}),
      ...(subagent && thread !== undefined ? { key: thread } : {}),
      ...(compaction
        ? { kind: 'compaction' as const, purpose: 'summary' }
        : { kind: subagent ? ('subagent' as const) : ('main' as const) }),
    }
  },
}
