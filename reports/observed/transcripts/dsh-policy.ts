// A DSH log re-derived under another series-start policy (`cachelab import --policy`): a second surface
// takes the log's events as recorded, except the system-prompt commits of a request that starts a series
// on an in-history route, where the decision is made again by the loop's own `projectSystemPrompt`. What
// the recorded commits did there tells which policy the log was recorded under.

import type { SeriesStartPolicy } from '../../../harness/policies.ts'
import { projectSystemPrompt, type SystemCommit } from '../../../harness/projections.ts'
import { type DshHeader, DshRequestBuilder, type DshSystemNode, systemText } from './dsh-request.ts'
import { type Fields, textOf } from './fields.ts'
import type { PolicyRederivation, RecordedSeriesStart } from './types.ts'

/** A recorded `system/message` replacement held back until its request shows whether it started a series. */
interface HeldReplacement {
  seq: number
  start: number
  end: number
  message: unknown
}

/** The system prompt a replacement commit writes, as a `system/message` would carry it. */
const systemMessage = (text: string) => ({ role: 'system', content: [{ type: 'text', text }] })

/** The commits as a comparable key: the replaced seqs and their texts, in seq order. */
function commitsKey(commits: readonly SystemCommit[]): string {
  return JSON.stringify(
    commits
      .map((commit) => (commit.kind === 'replace' ? [commit.seq, commit.text] : ['append', commit.text]))
      .sort((left, right) => String(left[0]).localeCompare(String(right[0]))),
  )
}

/** The effective prompt of a surface: its latest non-empty system node ("" when there is none). */
const effectivePrompt = (nodes: readonly DshSystemNode[]) =>
  nodes.findLast((node) => node.text !== '')?.text ?? ''

/**
 * The first message where two bodies differ (`messages[i]`), or undefined when they are equal. Shared
 * wire objects compare by reference; only a different object is compared by value.
 */
export function firstDifference(
  recorded: readonly unknown[],
  rederived: readonly unknown[],
): number | undefined {
  const length = Math.max(recorded.length, rederived.length)
  for (let index = 0; index < length; index += 1) {
    const left = recorded[index]
    const right = rederived[index]
    if (left !== right && JSON.stringify(left) !== JSON.stringify(right)) return index
  }
  return undefined
}

/**
 * The fold of one DSH log's surface under `policy`, fed the same events as the recorded surface. A window
 * runs from a step's start (or the previous dispatch) to the next dispatch, failed attempt or non-system
 * replacement; its system replacements are held, and at its end either applied as recorded or, when the
 * window's header started a series on an in-history route, set aside for the policy's own decision. A
 * replacement set aside leaves an alias from its seq to the node it would have replaced, so a later
 * replacement naming it (a compaction's range) still lands.
 */
export class SeriesStartRederivation {
  private readonly builder = new DshRequestBuilder()
  private readonly aliases = new Map<number, number>()
  private held: HeldReplacement[] = []
  /** The recorded system nodes before the window's first held replacement. */
  private before: DshSystemNode[] | undefined
  /** A header in this window started a series (or changed the tools on a route without tool updates). */
  private seriesHeader = false
  private inHistory = false
  /** The route announces tool updates (generation D), so a tools change starts no series for the prompt. */
  private toolUpdates = false
  private tools: string | undefined
  private systemSeen = false
  private broken: string | undefined
  /** What the windows since the previous request found at a series start, for the next request. */
  private seriesStart = false
  private recordedAs: RecordedSeriesStart | undefined

  constructor(
    private readonly policy: SeriesStartPolicy,
    /** The recorded surface's live system nodes, as they are now. */
    private readonly recordedSystem: () => DshSystemNode[],
  ) {}

  /** A `request/header`: the next requests' head, and whether it starts a series. */
  header(header: DshHeader, data: Fields): void {
    const tools = JSON.stringify(header.tools)
    const toolsChanged = this.tools !== undefined && tools !== this.tools
    this.tools = tools
    this.builder.setHeader(header)
    if (data.reason === 'series' || data.startsSeries === true) this.seriesHeader = true
    // DSH C counts a tool-schema change as a series start for the prompt decision alone.
    if (data.reason === 'change' && toolsChanged && !this.toolUpdates) this.seriesHeader = true
  }

  /** A `request/context`: the route's capabilities, in force until the next one. */
  context(data: Fields): void {
    this.inHistory = textOf(data.systemPromptUpdate) === 'in-history'
    this.toolUpdates = data.toolUpdate !== undefined
  }

  /** A `step/start` (or a failed attempt's end): the window before it is decided. */
  boundary(): void {
    this.decide()
  }

  /** A surface event appended at the tail. */
  append(seq: number, message: unknown, system: boolean): void {
    if (system) this.systemSeen = true
    this.builder.append(seq, message)
  }

  /** A surface event replacing `start..end`: a system one is held for its window, any other ends the window. */
  replace(seq: number, start: number, end: number, message: unknown, system: boolean): void {
    if (system) {
      this.systemSeen = true
      this.before ??= this.recordedSystem()
      this.held.push({ seq, start, end, message })
      return
    }
    this.decide()
    this.applyRecorded({ seq, start, end, message })
  }

  /**
   * The request dispatched now: its body under the policy beside the recorded one, or why none. Call
   * before the request's answer joins the surface.
   */
  build(recorded: Record<string, unknown>): PolicyRederivation {
    this.decide()
    const seriesStart = this.seriesStart
    const recordedAs = this.recordedAs
    this.seriesStart = false
    this.recordedAs = undefined
    if (!this.systemSeen)
      return {
        kind: 'not-applicable',
        reason:
          'no system/message on the surface: the prompt is in the request header (DSH generation B), where no series-start policy applies',
      }
    if (this.broken !== undefined) return { kind: 'not-applicable', reason: this.broken }
    const built = this.builder.build()
    if (built === undefined) return { kind: 'not-applicable', reason: 'no request header before the request' }
    const difference = firstDifference(
      (recorded.messages ?? []) as unknown[],
      (built.body.messages ?? []) as unknown[],
    )
    return {
      kind: 'rederived',
      policy: this.policy,
      body: built.body,
      seriesStart,
      ...(recordedAs !== undefined ? { recordedAs } : {}),
      ...(difference !== undefined ? { firstDifference: difference } : {}),
    }
  }

  /** End the window: apply its held replacements as recorded, or decide its series start again. */
  private decide(): void {
    const held = this.held
    const seriesHeader = this.seriesHeader
    const before = this.before
    this.held = []
    this.before = undefined
    this.seriesHeader = false
    if (!(seriesHeader && this.inHistory && this.systemSeen)) {
      for (const replacement of held) this.applyRecorded(replacement)
      return
    }
    this.seriesStart = true
    const rendered = effectivePrompt(this.recordedSystem())
    const decide = (nodes: readonly DshSystemNode[], seriesStart: SeriesStartPolicy) =>
      projectSystemPrompt(nodes, rendered, { inHistory: true, startsSeries: true, seriesStart })
    const recordedBefore = before ?? this.recordedSystem()
    const consolidate = decide(recordedBefore, 'consolidate')
    const keepLive = decide(recordedBefore, 'keep-live')
    const recorded = commitsKey(
      held.map((replacement) => ({
        kind: 'replace' as const,
        seq: replacement.start,
        text: systemText(replacement.message),
      })),
    )
    const found: RecordedSeriesStart =
      commitsKey(consolidate) === commitsKey(keepLive)
        ? 'either'
        : recorded === commitsKey(consolidate)
          ? 'consolidate'
          : recorded === commitsKey(keepLive)
            ? 'keep-live'
            : 'neither'
    // Evidence for one policy outweighs a step where both agree.
    if (this.recordedAs === undefined || this.recordedAs === 'either') this.recordedAs = found
    for (const replacement of held) this.aliases.set(replacement.seq, this.resolve(replacement.start))
    if (this.broken !== undefined) return
    for (const commit of decide(this.builder.systemNodes(), this.policy)) {
      // An append comes only with no node at all, where the recorded surface has none either.
      if (commit.kind !== 'replace') continue
      this.fail(this.builder.replace(commit.seq, commit.seq, commit.seq, systemMessage(commit.text)))
    }
  }

  private applyRecorded(replacement: HeldReplacement): void {
    if (this.broken !== undefined) return
    const start = this.resolve(replacement.start)
    const end = this.resolve(replacement.end)
    this.fail(this.builder.replace(replacement.seq, start, end, replacement.message))
  }

  private resolve(seq: number): number {
    return this.aliases.get(seq) ?? seq
  }

  private fail(failure: string | undefined): void {
    if (failure !== undefined) this.broken ??= `re-derived under ${this.policy}: ${failure}`
  }
}
