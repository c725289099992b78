// Pure decisions of the loop: how a rendered system prompt reaches the surface, when a request header
// is written and why, what a tool-result prune keeps, the session prefix and the adapter's defaults.
// Each is a function of data; the loop commits what they return.

import type { ImageOffloadPolicy, SeriesStartPolicy, ToolUpdatePolicy } from './policies.ts'
import type {
  AdapterConfigDefaults,
  AdapterDefaults,
  CallConfig,
  HeaderReason,
  Message,
  PruneKeep,
  RequestHeader,
  Seq,
  ToolSchema,
} from './types.ts'

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
    adapterDefaults: header.adapterDefaults?.maxTokens === true ? header.adapterDefaults : undefined,
    system: header.system === '' ? undefined : header.system,
    tools: header.tools?.length === 0 ? undefined : header.tools,
    messagePrefix: header.messagePrefix?.length === 0 ? undefined : header.messagePrefix,
    afterSlot: header.afterSlot?.length === 0 ? undefined : header.afterSlot,
    retiredTools: header.retiredTools?.length === 0 ? undefined : header.retiredTools,
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

/** The tools a request declares and the update the model must be told about. */
export interface ToolProjection {
  tools: ToolSchema[]
  /** Declared only to keep the tools prefix stable; the model was told they are gone. */
  retired: string[]
  update?: { added: ToolSchema[]; removed: string[] }
}

const sameTool = (left: ToolSchema, right: ToolSchema) =>
  left.name === right.name &&
  left.description === right.description &&
  JSON.stringify(left.parameters) === JSON.stringify(right.parameters)

/**
 * Project the active tool set onto a route's tool-update mode (DSH D). `unsupported` declares the active
 * set as is (a change rewrites the tools prefix). `addition-only` keeps earlier declarations in place,
 * appends additions as deferred declarations announced by a developer message, and drops removals
 * silently. `in-history` also keeps removed declarations (retired) and announces removals. A changed
 * definition under an existing name is replaced in place on every route.
 */
export function projectTools(
  previous: { tools: readonly ToolSchema[]; retired: readonly string[] } | undefined,
  active: readonly ToolSchema[],
  mode: ToolUpdatePolicy,
): ToolProjection {
  if (previous === undefined || mode === 'unsupported') return { tools: [...active], retired: [] }
  const activeByName = new Map(active.map((tool) => [tool.name, tool]))
  const declaredNames = new Set(previous.tools.map((tool) => tool.name))
  const retired = new Set(previous.retired)
  const kept: ToolSchema[] = []
  const removed: string[] = []
  const added: ToolSchema[] = []
  for (const tool of previous.tools) {
    const current = activeByName.get(tool.name)
    if (current === undefined) {
      if (!retired.has(tool.name)) removed.push(tool.name)
      if (mode === 'in-history') kept.push(tool)
      continue
    }
    const { deferLoading: _deferred, ...bare } = tool
    if (!sameTool(bare, current))
      kept.push(tool.deferLoading === true ? { ...current, deferLoading: true } : current)
    else kept.push(tool)
    if (retired.has(tool.name)) {
      retired.delete(tool.name)
      added.push(current)
    }
  }
  for (const tool of active) {
    if (declaredNames.has(tool.name)) continue
    kept.push({ ...tool, deferLoading: true })
    added.push(tool)
  }
  if (mode === 'in-history') for (const name of removed) retired.add(name)
  const announced = mode === 'in-history' ? removed : []
  const update = added.length > 0 || announced.length > 0 ? { added, removed: announced } : undefined
  return { tools: kept, retired: [...retired], ...(update !== undefined ? { update } : {}) }
}

/** The developer message announcing a tool update. */
export function toolUpdateText(update: { added: readonly ToolSchema[]; removed: readonly string[] }): string {
  const lines = ['<tool-update>']
  for (const tool of update.added)
    lines.push(`added ${tool.name}: ${tool.description} parameters ${JSON.stringify(tool.parameters)}`)
  for (const name of update.removed) lines.push(`removed ${name}: do not call it any more`)
  lines.push('</tool-update>')
  return lines.join('\n')
}

/**
 * Which images to offload when a request carries more than `limit` (oldest first). `per-request` removes
 * just the excess, so an early message changes on nearly every new upload; `quantized` removes whole
 * quanta, so the removed prefix stays stable until the next quantum is crossed.
 */
export function planImageOffload(
  images: ReadonlyArray<{ seq: Seq; id: string }>,
  limit: number,
  quantum: number,
  mode: ImageOffloadPolicy,
): Array<{ seq: Seq; imageIds: string[] }> {
  const excess = images.length - limit
  if (excess <= 0) return []
  const count =
    mode === 'per-request' ? excess : Math.min(images.length, Math.ceil(excess / quantum) * quantum)
  const targets: Array<{ seq: Seq; imageIds: string[] }> = []
  for (const image of images.slice(0, count)) {
    const last = targets.at(-1)
    if (last !== undefined && last.seq === image.seq) last.imageIds.push(image.id)
    else targets.push({ seq: image.seq, imageIds: [image.id] })
  }
  return targets
}

/**
 * Render the session-prefix messages from what they describe. An empty source composes nothing: as in
 * seed 000, an empty composition is the prefix's absence, not an empty wrapper.
 */
export function composePrefix(source: string): Message[] {
  if (source === '') return []
  return [
    { role: 'user', content: [{ type: 'text', text: `<session-context>\n${source}\n</session-context>` }] },
  ]
}

/**
 * The call config a request is sent with: the world's, with the adapter's value for each field it leaves
 * out, flagged so the header records whose value it is (DSH logs the flag, not a second config).
 */
export function withAdapterDefaults(
  config: CallConfig,
  defaults: AdapterConfigDefaults | undefined,
): { config: CallConfig; adapterDefaults?: AdapterDefaults } {
  if (config.maxTokens !== undefined || defaults?.maxTokens === undefined) return { config }
  return { config: { ...config, maxTokens: defaults.maxTokens }, adapterDefaults: { maxTokens: true } }
}
