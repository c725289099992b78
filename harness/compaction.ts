// Compaction planning, pure over the session: which nodes a summary replaces, the summarizer request
// (replaying the conversation prefix or not), and which tool results a prune cuts. The loop commits the
// events.

import { deriveRequest } from './derive.ts'
import { messageTokens } from './meter.ts'
import type { SessionProjection } from './session.ts'
import type { CallConfig, DerivedRequest, PruneKeep, Seq, UserMessage } from './types.ts'

const SUMMARY_INSTRUCTION =
  'Summarize the conversation so far for your own later use: the task, decisions made, files touched, open questions.'
const SUMMARIZER_SYSTEM = 'You write concise engineering summaries of agent sessions.'

/** Options of a tool-result prune. */
export interface PruneOptions {
  /** Results longer than this many characters are cut. */
  thresholdChars: number
  /** Characters a cut result keeps. */
  keepChars: number
  /** The last nodes of the surface are left alone. */
  skipLastNodes: number
  /** Which part is kept; the policy decides when absent. */
  keep?: PruneKeep
}

/**
 * The live nodes a summary replaces: everything after the system head but the last `retainNodes`, never
 * separating tool results from the call that made them; undefined when there is nothing to summarize.
 */
export function summaryRange(session: SessionProjection, retainNodes: number): Seq[] | undefined {
  const surface = session.surface
  const first = surface.findIndex((seq) => session.event(seq).type !== 'system/message')
  let end = surface.length - retainNodes
  // Retaining the whole surface or more leaves nothing; checked before `end` indexes the surface.
  if (first < 0 || end <= first) return undefined
  while (end < surface.length && session.event(surface[end] as number).type === 'tool/result') end += 1
  return surface.slice(first, end)
}

/** The meter's estimate of what the given surface nodes send now (offloaded images as their placeholders). */
export function shadowedTokens(session: SessionProjection, shadowed: readonly Seq[]): number {
  const nodes = new Set(shadowed)
  return session
    .messages()
    .filter((derived) => derived.sourceSeqs.some((seq) => nodes.has(seq)))
    .reduce((sum, derived) => sum + messageTokens(derived.message), 0)
}

/** The summary node's message. */
export function summaryMessage(summary: string): UserMessage {
  return { role: 'user', content: [{ type: 'text', text: `<summary>\n${summary}\n</summary>` }] }
}

/**
 * The summarizer's request. Replaying the prefix: the current request's messages through the shadowed
 * range plus a trailing instruction (the cached prefix is read). Otherwise: its own system prompt, no
 * tools, and the shadowed events as a transcript (all of it uncached).
 */
export function summarizerRequest(
  session: SessionProjection,
  shadowed: readonly Seq[],
  replayPrefix: boolean,
  config: CallConfig,
): DerivedRequest {
  const current = deriveRequest(session)
  const instruction: UserMessage = { role: 'user', content: [{ type: 'text', text: SUMMARY_INSTRUCTION }] }
  if (replayPrefix) {
    const position = new Map(session.surface.map((seq, index) => [seq, index]))
    const limit = position.get(shadowed.at(-1) as number) ?? 0
    const messages = current.messages.filter(
      (message) =>
        message.origin === 'session-prefix' ||
        (message.origin === 'surface' && (position.get(message.sourceSeqs[0] as number) ?? 0) <= limit),
    )
    return {
      ...current,
      messages: [...messages, { message: instruction, sourceSeqs: [], origin: 'surface' }],
    }
  }
  const transcript = shadowed
    .map((seq) => session.event(seq))
    .map((event) => `${event.type}: ${JSON.stringify(event.data)}`)
    .join('\n')
  return {
    sessionId: current.sessionId,
    config,
    route: current.route,
    system: { text: SUMMARIZER_SYSTEM, sourceSeq: current.headerSeq },
    tools: [],
    headerSeq: current.headerSeq,
    messages: [
      {
        message: {
          role: 'user',
          content: [{ type: 'text', text: `${transcript}\n\n${SUMMARY_INSTRUCTION}` }],
        },
        sourceSeqs: [...shadowed],
        origin: 'surface',
      },
    ],
  }
}

/**
 * The tool results a prune cuts: longer than the threshold and than what a cut keeps, outside the last
 * `skipLastNodes` nodes, and not already cut. A cut result is a `tool/result` that replaces another (only
 * a prune writes one); it carries the prune marker, so cutting it again would only cut the marker.
 */
export function pruneTargets(session: SessionProjection, options: PruneOptions): Seq[] {
  const surface = session.surface
  const limit = Math.max(options.thresholdChars, options.keepChars)
  return surface.slice(0, Math.max(0, surface.length - options.skipLastNodes)).filter((seq) => {
    const event = session.event(seq)
    return (
      event.type === 'tool/result' &&
      event.surfaceOp === 'append' &&
      [...event.data.message.text].length > limit
    )
  })
}
