// qwen-code on Chat Completions (notes/2026-12-01-conversations.md): `user-agent: QwenCode/<version> …`;
// no session id on the wire unless the user adds one (its `customHeaders` setting can send
// `x-cachelab-session: ${session_id}`). Its managed-memory extractor, next-speaker check and compaction
// requests are told by their prompts.

import type { ConversationKind } from '../../../../providers/wire/exchange.ts'
import { lastItemText, systemText } from '../../../../providers/wire/wire-text.ts'
import type { AgentPort, AgentReading, WireRequest } from './types.ts'

const USER_AGENT = /^QwenCode\/([0-9][^\s]*)/

const SUMMARIZER = 'You are the component that summarizes a conversation'

/** The kind and purpose of a qwen-code request. */
function placeOf(request: WireRequest): { kind: ConversationKind; purpose?: string } {
  const system = systemText(request.api, request.body).trimStart()
  const last = lastItemText(request.body).trimStart()
  if (system.startsWith(SUMMARIZER) || last.startsWith(SUMMARIZER))
    return { kind: 'compaction', purpose: 'summary' }
  if (system.startsWith('You are now acting as the managed memory extraction subagent'))
    return { kind: 'side', purpose: 'memory' }
  if (last.startsWith('Analyze *only* the content and structure of your immediately preceding response'))
    return { kind: 'side', purpose: 'next-speaker' }
  if (system.startsWith('Generate a concise, sentence-case title')) return { kind: 'side', purpose: 'title' }
  return { kind: 'main' }
}

export const qwenCode: AgentPort = {
  name: 'qwen-code',
  read(request: WireRequest): AgentReading | undefined {
    const agent = USER_AGENT.exec(request.headers['user-agent'] ?? '')
    if (agent === null) return undefined
    return {
      agent: 'qwen-code',
      ...(agent[1] !== undefined ? { version: agent[1] } : {}),
      ...placeOf(request),
    }
  },
}
