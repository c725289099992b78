// pi (the coding agent of pi-mono) on any API its models name (notes/2026-12-01-conversations.md): no
// user-agent of its own, so it is told by its system prompt; on the Responses API its session id travels
// as `session_id` and `prompt_cache_key`, elsewhere nothing names it. Compaction sends standalone
// summarizer requests.

import { systemText } from '../../../../providers/wire/wire-text.ts'
import type { AgentPort, AgentReading, WireRequest } from './types.ts'

const MAIN = 'You are an expert coding assistant operating inside pi'
const SUMMARIZER = 'You are a context summarization assistant'

export const pi: AgentPort = {
  name: 'pi',
  read(request: WireRequest): AgentReading | undefined {
    const system = systemText(request.api, request.body).trimStart()
    const compaction = system.startsWith(SUMMARIZER)
    if (!system.startsWith(MAIN) && !compaction) return undefined
    const cacheKey =
      typeof request.body.prompt_cache_key === 'string' ? request.body.prompt_cache_key : undefined
    const session = request.headers.session_id ?? cacheKey
    return {
      agent: 'pi',
      ...(session !== undefined ? { session } : {}),
      ...(compaction ? { kind: 'compaction' as const, purpose: 'summary' } : { kind: 'main' as const }),
    }
  },
}
