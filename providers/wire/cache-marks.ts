// A request's cache marks from the provider's side: whether its provider caches only what a request marks
// (Anthropic's `cache_control`, Bedrock's `cachePoint`), and the same request with the one mark a client
// that asks for caching sends, so what it would have read can be simulated beside what it did.

import type { CacheRules } from '../catalog/types.ts'
import { bodyShape, type WireApi } from '../types.ts'

/** Whether a provider with these cache rules caches nothing a request does not mark. */
export function cachesOnlyMarked(rules: CacheRules): boolean {
  return rules.kind === 'anthropic' || rules.kind === 'bedrock'
}

/**
 * The body with the mark a client that asks for caching sends: Anthropic's top-level `cache_control`
 * (automatic caching: a breakpoint on the last cacheable block, moved on as the conversation grows), or a
 * Converse `cachePoint` after the last message's content. Undefined for a body no mark can be added to.
 */
export function withCacheMark(
  api: WireApi,
  body: Record<string, unknown>,
): Record<string, unknown> | undefined {
  if (bodyShape(api) === 'anthropic-messages') return { ...body, cache_control: { type: 'ephemeral' } }
  if (api !== 'bedrock-converse' || !Array.isArray(body.messages)) return undefined
  const messages = body.messages as unknown[]
  const last = messages.at(-1) as { content?: unknown } | undefined
  if (last === undefined || !Array.isArray(last.content)) return undefined
  return {
    ...body,
    messages: [
      ...messages.slice(0, -1),
      { ...last, content: [...last.content, { cachePoint: { type: 'default' } }] },
    ],
  }
}
