// GitHub Copilot CLI with its own key (`COPILOT_PROVIDER_*`, notes/2026-12-08-copilot-cli.md): it sends the
// OpenAI or Anthropic SDK's `user-agent` and no session id, but every request carries `x-initiator` (`user`,
// `agent`) and most an `x-interaction-type` naming the conversation's kind: its subagents, its compaction,
// its background and MCP-sampling requests. On the Responses API its `prompt_cache_key` names the session
// (a hash the CLI does not write down, which changes with the model); the driver sends `x-cachelab-session`.

import type { ConversationKind } from '../../../../providers/wire/exchange.ts'
import type { AgentPort, AgentReading, WireRequest } from './types.ts'

const INITIATORS = new Set(['user', 'agent', 'sub-agent'])

/** The kind (and purpose) of each `x-interaction-type` Copilot CLI sends. */
const KINDS: Readonly<Record<string, { kind: ConversationKind; purpose?: string }>> = {
  'conversation-user': { kind: 'main' },
  'conversation-agent': { kind: 'main' },
  'conversation-subagent': { kind: 'subagent' },
  'conversation-compaction': { kind: 'compaction', purpose: 'summary' },
  'conversation-background': { kind: 'side', purpose: 'background' },
  'conversation-sampling': { kind: 'side', purpose: 'sampling' },
}

export const copilot: AgentPort = {
  name: 'copilot',
  read(request: WireRequest): AgentReading | undefined {
    const { headers } = request
    if (!INITIATORS.has(headers['x-initiator'] ?? '')) return undefined
    // A follow-up request of a conversation sends no interaction type: its kind is the tracker's to infer.
    const place = KINDS[headers['x-interaction-type'] ?? '']
    return { agent: 'copilot', ...place }
  },
}
