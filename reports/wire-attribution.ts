// Attribution of traffic cachelab did not generate: with no session log to name an event, a break is
// the first wire node where a request stops extending the previous request of its session, and a
// cause read off the wire — the model or another setting, the tools, the system prompt, or the
// conversation: a message edited, the history truncated (messages dropped) or summarized (replaced by
// fewer).

import type { Counterfactual } from '../providers/sim/types.ts'
import { bodyModel } from '../providers/types.ts'
import { firstDivergentSegment, type ItemDigest, type RequestDigest } from '../providers/wire/digest.ts'
import type { Attribution } from './attribution.ts'
import { type ChangeContent, changeAt, modelChange, settingChange } from './break-change.ts'
import type { BreakCause } from './types.ts'

/** `messages[3].1` → { part: 'messages', index: 3 }. */
function parseNode(node: string): { part: string; index: number } | undefined {
  const match = /^([a-z_]+)\[(\d+)\]/.exec(node)
  return match === null ? undefined : { part: match[1] as string, index: Number(match[2]) }
}

const isPrompt = (item: ItemDigest | undefined) => item?.role === 'system' || item?.role === 'developer'

/** Why the message list diverges at item `index`. */
function conversationCause(
  previous: readonly ItemDigest[],
  current: readonly ItemDigest[],
  index: number,
): BreakCause {
  const now = current[index]
  if (isPrompt(now) || isPrompt(previous[index])) return 'system-replace'
  if (now === undefined) return 'history-truncated'
  for (let later = index + 1; later < previous.length; later += 1) {
    if (previous[later]?.hash === now.hash) return 'history-truncated'
  }
  if (current.length < previous.length) return 'history-summarized'
  return 'message-edited'
}

/** The settings that changed between two requests, by name. */
export function changedSettings(previous: RequestDigest, current: RequestDigest): string[] {
  const names = new Set([...Object.keys(previous.config), ...Object.keys(current.config)])
  return [...names]
    .filter((name) => JSON.stringify(previous.config[name]) !== JSON.stringify(current.config[name]))
    .sort()
}

/**
 * The provider's own re-rendering at segment `index`, if that is what stopped the prompt extending the
 * previous one: the item the previous request rendered there is resent unchanged, the settings are the
 * same, and yet it renders otherwise (earlier turns' reasoning items or thinking blocks left out by the
 * provider's rules). The client kept to an append-only history, so this is never its break.
 */
function droppedByProvider(
  previous: RequestDigest,
  current: RequestDigest,
  index: number,
): Attribution | undefined {
  const before = previous.segments[index]
  const parsed = before === undefined ? undefined : parseNode(before[0])
  if (before === undefined || parsed === undefined) return undefined
  if (parsed.part !== 'messages' && parsed.part !== 'input' && parsed.part !== 'contents') return undefined
  // The request renders that item otherwise, or goes on with a later one: not a tool or a system block
  // inserted before it (a tool added to a list the provider renders after the system message).
  const now = current.segments[index]
  const nowParsed = now === undefined ? undefined : parseNode(now[0])
  if (nowParsed === undefined || nowParsed.part !== parsed.part || nowParsed.index < parsed.index)
    return undefined
  const sent = previous.items[parsed.index]
  if (sent === undefined || current.items[parsed.index]?.hash !== sent.hash) return undefined
  // Every earlier item is resent too: an item moved into this place is the client's edit.
  for (let item = 0; item < parsed.index; item += 1)
    if (previous.items[item]?.hash !== current.items[item]?.hash) return undefined
  if (changedSettings(previous, current).length > 0) return undefined
  return { node: before[0], cause: 'reasoning-dropped' }
}

/** Whether a break is the provider's own (its rules changed what the client resent unchanged). */
export function isProviderSide(attribution: Attribution | undefined): boolean {
  return attribution?.cause === 'reasoning-dropped'
}

/**
 * The counterfactual of a request whose break is the provider's own: the client resent its history
 * unchanged, so it could read no more than the simulator read (`read`), and what the provider's rules
 * left out is the provider side's cost. Any other counterfactual is as the simulator gave it.
 */
export function withProviderSide(
  attribution: Attribution | undefined,
  counterfactual: Counterfactual | undefined,
  read: number,
): (Omit<Counterfactual, 'cause'> & { cause?: BreakCause }) | undefined {
  if (attribution === undefined || counterfactual === undefined || !isProviderSide(attribution))
    return counterfactual
  return { ideal: read, warm: Math.max(counterfactual.warm, counterfactual.ideal), cause: attribution.cause }
}

/**
 * The break between two consecutive successful requests of a captured conversation, or undefined when
 * `current` extends `previous` on the same model: the client's, or the provider's own re-rendering of
 * what the client resent unchanged (`reasoning-dropped`, see `isProviderSide`). `compacted`: a compaction
 * request of the session summarized the conversation just before `current` (its placement's
 * `compactedBy`), so a rewrite of its history, prompt or tools is that summary's, however the agent rebuilt
 * it (a model switch is still named first). What changed there comes with it: a model or a setting from
 * the digests, which keep them; a text only from `content`, the two requests' prompts, where the port
 * holds them (a capture keeps none, so its tracker asks while it serves).
 */
export function wireBreak(
  previous: RequestDigest,
  current: RequestDigest,
  compacted = false,
  content?: ChangeContent,
): Attribution | undefined {
  const model = bodyModel(current.config)
  if (bodyModel(previous.config) !== model)
    return { node: 'model', cause: 'config-changed', change: modelChange(bodyModel(previous.config), model) }
  const index = firstDivergentSegment(previous.segments, current.segments)
  if (index === undefined) return undefined
  const found = divergedAt(previous, current, index, compacted)
  if (found?.node === undefined) return found
  const settings = { previous: previous.config, current: current.config }
  const change =
    content !== undefined
      ? changeAt(content, index, found.node, settings)
      : found.cause === 'config-changed'
        ? settingChange(settings, found.node)
        : undefined
  return change === undefined ? found : { ...found, change }
}

/** The break at segment `index`, where `current` first stops extending `previous`: its node and cause. */
function divergedAt(
  previous: RequestDigest,
  current: RequestDigest,
  index: number,
  compacted: boolean,
): Attribution | undefined {
  const segment = current.segments[index] ?? previous.segments[index]
  if (segment === undefined) return undefined
  const dropped = droppedByProvider(previous, current, index)
  if (dropped !== undefined) return dropped
  const node = segment[0]
  const parsed = parseNode(node)
  // The agent rebuilt the whole request from the summary: whatever node it differs at first (the tools
  // too: Claude Code lists another set after /compact), the rewrite is the compaction's.
  if (compacted) return { node, cause: 'history-summarized' }
  switch (parsed?.part) {
    case 'tools':
    case 'response_format':
      return { node, cause: 'tools-changed' }
    case 'system':
      return { node, cause: 'system-replace' }
    case 'messages':
    case 'input':
    case 'contents': {
      const before = previous.items[parsed.index]
      const now = current.items[parsed.index]
      // The same item, a different prompt: a request-wide setting folded into the prompt changed.
      if (before !== undefined && before.hash === now?.hash && changedSettings(previous, current).length > 0)
        return { node, cause: 'config-changed' }
      return { node, cause: conversationCause(previous.items, current.items, parsed.index) }
    }
    default:
      return { node, cause: 'config-changed' }
  }
}
