// Pure decisions of the loop: how a rendered system prompt reaches the surface, when a request header
// is written and why, and what a tool-result prune keeps. Each is a function of data; the loop commits
// what they return.

import type { SeriesStartPolicy } from './policies.ts'
import type { HeaderReason, PruneKeep, RequestHeader, Seq } from './types.ts'

/** A system-prompt surface change: append a new node, or replace one node's text. */
export type SystemCommit = { kind: 'append'; text: string } | { kind: 'replace'; seq: Seq; text: string }

/** What the system-prompt projection needs to know about this request. */
export interface SystemPromptInput {
  /** The route reads the latest system message anywhere in history. */
  inHistory: boolean
  /** This request begins a new message series. */
  startsSeries: boolean
  seriesStart: SeriesStartPolicy
}

/**
 * Project the rendered system prompt onto the live system nodes (surface order). On an in-history route a
 * change is appended; on an unsupported route, at an empty rendering, or at a series start (unless
 * `keep-live` finds the latest live node already holding the rendering) later nodes are cleared and node 0
 * is rewritten if it differs.
 */
export function projectSystemPrompt(
  nodes: ReadonlyArray<{ seq: Seq; text: string }>,
  rendered: string,
  input: SystemPromptInput,
): SystemCommit[] {
  const head = nodes[0]
  if (head === undefined) return [{ kind: 'append', text: rendered }]
  const latest = nodes.findLast((node) => node.text !== '') ?? head
  const keepLive = input.seriesStart === 'keep-live' && latest.text === rendered
  if (!input.inHistory || rendered === '' || (input.startsSeries && !keepLive)) {
    const commits: SystemCommit[] = nodes
      .slice(1)
      .filter((node) => node.text !== '')
      .map((node) => ({ kind: 'replace', seq: node.seq, text: '' }))
    if (head.text !== rendered) commits.push({ kind: 'replace', seq: head.seq, text: rendered })
    return commits
  }
  if (latest.text === rendered) return []
  return [{ kind: 'append', text: rendered }]
}

/** Canonical JSON of a header: equal headers serialize equally (empty fields dropped). */
export function canonicalHeader(header: RequestHeader): string {
  return JSON.stringify({
    config: header.config,
    system: header.system === '' ? undefined : header.system,
    tools: header.tools?.length === 0 ? undefined : header.tools,
    sessionPrefix: header.sessionPrefix?.length === 0 ? undefined : header.sessionPrefix,
    afterSlot: header.afterSlot?.length === 0 ? undefined : header.afterSlot,
  })
}

/** Whether two headers would produce the same request envelope. */
export function headerEquals(left: RequestHeader | undefined, right: RequestHeader): boolean {
  return left !== undefined && canonicalHeader(left) === canonicalHeader(right)
}

/** The header event a request needs, if any. */
export interface HeaderDecision {
  reason: HeaderReason
  startsSeries: boolean
}

/**
 * Decide whether this request writes a `request/header`: once per loop instance (`initial` on a new log,
 * `resume` over an existing one), then on a changed header (`change`, flagged when it also starts a
 * series), or unchanged at a series start (`series`).
 */
export function decideHeader(input: {
  loggedThisInstance: boolean
  baseline: RequestHeader | undefined
  header: RequestHeader
  startsSeries: boolean
}): HeaderDecision | undefined {
  if (!input.loggedThisInstance) {
    return { reason: input.baseline === undefined ? 'initial' : 'resume', startsSeries: false }
  }
  if (!headerEquals(input.baseline, input.header))
    return { reason: 'change', startsSeries: input.startsSeries }
  if (input.startsSeries) return { reason: 'series', startsSeries: true }
  return undefined
}

/** The marker a pruned tool result carries where text was removed. */
export const PRUNE_MARKER = '\n\n[... tool result pruned ...]\n\n'

/**
 * A tool result cut to `keepChars` characters: the head, the tail, or head and tail around the middle
 * (`middle` keeps both ends, as DSH's pruner does). Returns the text unchanged when it is short enough.
 */
export function pruneText(text: string, keepChars: number, keep: PruneKeep): string {
  const characters = [...text]
  if (characters.length <= keepChars) return text
  switch (keep) {
    case 'head':
      return `${characters.slice(0, keepChars).join('')}${PRUNE_MARKER}`
    case 'tail':
      return `${PRUNE_MARKER}${characters.slice(characters.length - keepChars).join('')}`
    case 'middle': {
      const head = Math.ceil((keepChars * 4) / 5)
      const tail = keepChars - head
      return `${characters.slice(0, head).join('')}${PRUNE_MARKER}${characters.slice(characters.length - tail).join('')}`
    }
  }
}
