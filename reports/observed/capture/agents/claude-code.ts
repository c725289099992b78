// Claude Code on the Anthropic Messages API (notes/2026-12-01-conversations.md): `user-agent:
// claude-cli/<version> (…)`; its session id in `x-claude-code-session-id` (and inside `metadata.user_id`,
// a JSON record beside a device id that is never used); a subagent's id in `x-claude-code-agent-id`
// (its billing block also says `cc_is_subagent=true`); `/compact` sends the conversation with a last
// user message that asks for a text-only summary; a title request declares no tools and asks for JSON.

import { bodyShape } from '../../../../providers/types.ts'
import type { ConversationKind } from '../../../../providers/wire/exchange.ts'
import { lastItemText, systemText } from '../../../../providers/wire/wire-text.ts'
import type { AgentPort, AgentReading, WireRequest } from './types.ts'

const USER_AGENT = /^claude-cli\/([0-9][^\s]*)/

/** The session id inside Claude Code's `metadata.user_id` (`{"device_id":…,"session_id":…}`). */
function metadataSession(body: Record<string, unknown>): string | undefined {
  const user = (body.metadata as { user_id?: unknown } | undefined)?.user_id
  if (typeof user !== 'string' || !user.startsWith('{')) return undefined
  try {
    const parsed = JSON.parse(user) as { session_id?: unknown }
    return typeof parsed.session_id === 'string' && parsed.session_id !== '' ? parsed.session_id : undefined
  } catch {
    return undefined
  }
}

/** The kind and purpose of a request of Claude Code's main process (not a subagent's). */
function mainKind(request: WireRequest): { kind: ConversationKind; purpose?: string } {
  if (lastItemText(request.body).trimStart().startsWith('CRITICAL: Respond with TEXT ONLY'))
    return { kind: 'compaction', purpose: 'summary' }
  const format = (request.body.output_config as { format?: { type?: unknown } } | undefined)?.format
  if (format?.type === 'json_schema') {
    const system = systemText(request.api, request.body).trimStart()
    return {
      kind: 'side',
      purpose: system.includes('You are naming a coding session') ? 'title' : 'structured',
    }
  }
  return { kind: 'main' }
}

export const claudeCode: AgentPort = {
  name: 'claude-code',
  read(request: WireRequest): AgentReading | undefined {
    if (bodyShape(request.api) !== 'anthropic-messages') return undefined
    const agent = USER_AGENT.exec(request.headers['user-agent'] ?? '')
    const session = request.headers['x-claude-code-session-id'] ?? metadataSession(request.body)
    if (agent === null && session === undefined) return undefined
    const key = request.headers['x-claude-code-agent-id']
    const place = key !== undefined && key !== '' ? ({ kind: 'subagent', key } as const) : mainKind(request)
    return {
      agent: 'claude-code',
      ...(agent?.[1] !== undefined ? { version: agent[1] } : {}),
      ...(session !== undefined ? { session } : {}),
      ...place,
    }
  },
}
