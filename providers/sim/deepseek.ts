// DeepSeek's disk cache. Current rules: a request hits only a whole persisted cache prefix unit; units
// are persisted at the end of each request's input and of its output, at the common prefix of two
// requests, and (a parameter, off by default) at fixed token intervals; a read is reported in whole
// `readGranularityTokens` (128 on the V4 models, measured on live logs; 0 in the documented mode). Legacy
// rules: the longest common prefix with an earlier request, in 64-token storage units.

import { type DeepSeekCacheRules, type ModelEntry, simulationModel } from '../catalog.ts'
import { counterfactualTrace, type Probe, previousModel, UNBOUNDED_READ } from './counterfactual.ts'
import { deepseekKeepsReasoning, latestUserMessage, linearizeChat } from './linearize-openai.ts'
import { billedOutputTokens } from './output.ts'
import { scaleTokens, tokensThrough, unwrittenCounts } from './prompt.ts'
import { LONG_TEXT_CHARACTERS, sharedTokenCounter, type TokenCounter } from './tokens.ts'
import { PrefixTrie, type TrieNode } from './trie.ts'
import type {
  Prompt,
  ReadBounds,
  Segment,
  Shortfall,
  Simulation,
  SimulationRequest,
  SimulatorOptions,
  TrieMeter,
} from './types.ts'

/** A unit's lifetime: readable from `availableAt` until idle for the eviction time. */
interface UnitState {
  availableAt: number
  lastUsed: number
}

/** A unit that ends inside the segment after its node: the first `textTokens` tokens of `text`. */
interface PartialUnit extends UnitState {
  frame: string
  text: string
  textTokens: number
  /** Scaled tokens of the unit inside the segment (framing included). */
  tokens: number
}

interface NodeState {
  /** A unit ends exactly after this node's segment. */
  unit?: UnitState
  partials?: PartialUnit[]
}

/** What a prompt reads from the units: the deepest live one, and why a deeper one went unread. */
interface UnitRead {
  path: Array<TrieNode<NodeState>>
  hit: { tokens: number; state: UnitState } | undefined
  shortfall?: Shortfall
}

/** A unit position in a prompt: `depth` whole segments plus a partial segment. */
interface UnitPosition {
  depth: number
  /** Text tokens into segment `depth` (0 for a boundary unit). */
  textTokens: number
  tokens: number
}

/** The counterfactual's reads: the current model's cache, and the previous request's model's after a switch. */
interface Probes {
  own: Probe
  switched: Probe | undefined
}

export class DeepSeekCacheSimulator {
  private readonly counter: TokenCounter
  private readonly models: readonly ModelEntry[] | undefined
  /** One trie per model: a cached prefix is the model's own KV state, never another model's. */
  private readonly tries = new Map<string, PrefixTrie<NodeState>>()
  private readonly meter: TrieMeter

  constructor(options: SimulatorOptions = {}) {
    this.counter = options.counter ?? sharedTokenCounter
    this.models = options.models
    this.meter = options.meter ?? { bytes: 0 }
  }

  /**
   * Remove the units evicted by `at` (idle past the eviction time) and the prefixes that lead only to
   * them. The common prefix with an earlier request then counts only requests whose units are still held.
   */
  prune(at: number): number {
    let removed = 0
    for (const [model, trie] of this.tries) {
      const { evictionSeconds } = this.model({ model }).cache as DeepSeekCacheRules
      const gone = (state: UnitState | undefined) =>
        state === undefined || at - state.lastUsed >= evictionSeconds
      removed += trie.prune(
        (node) =>
          node === undefined || (gone(node.unit) && (node.partials ?? []).every((partial) => gone(partial))),
      )
      if (trie.root.children.size === 0) this.tries.delete(model)
    }
    return removed
  }

  linearize(body: Record<string, unknown>): Prompt {
    return linearizeChat(body, this.counter, this.model(body).tokenScale, { reasoning: 'deepseek' })
  }

  simulate(_api: 'chat', request: SimulationRequest): Simulation {
    const entry = this.model(request.body)
    const rules = entry.cache as DeepSeekCacheRules
    const prompt = this.linearize(request.body)
    const output = billedOutputTokens(request, this.counter, entry.tokenScale)
    const trie = this.trieOf(entry.model)
    // Staying on the model the previous request ran on would have read that model's units.
    const stayed = previousModel(request.previous, entry, (model) => this.model({ model }))
    const probes: Probes = {
      own: this.probe(entry, request.at),
      switched: stayed === undefined ? undefined : this.probe(stayed, request.at),
    }
    return rules.mode === 'legacy'
      ? this.simulateLegacy(trie, rules, request, prompt, output, probes)
      : this.simulateUnits(trie, rules, request, prompt, output, entry.tokenScale, probes)
  }

  /** A read of a model's cache at `at` under its rules (units or legacy), changing nothing: a counterfactual's probe. */
  private probe(entry: ModelEntry, at: number): Probe {
    const rules = entry.cache as DeepSeekCacheRules
    const trie = this.tries.get(entry.model)
    return (candidate, bounds) => {
      if (trie === undefined) return { read: 0, shortfall: undefined, stored: 0 }
      if (rules.mode === 'legacy')
        return this.readLegacy(trie, candidate, at, rules, entry.tokenScale, bounds)
      const probed = this.readUnits(trie, candidate, at, rules, bounds)
      return {
        read: onGrid(probed.hit?.tokens ?? 0, rules.readGranularityTokens),
        shortfall: probed.shortfall,
        stored: tokensThrough(candidate, probed.path.length),
      }
    }
  }

  private trieOf(model: string): PrefixTrie<NodeState> {
    let trie = this.tries.get(model)
    if (trie === undefined) {
      trie = new PrefixTrie<NodeState>(this.meter)
      this.tries.set(model, trie)
    }
    return trie
  }

  private model(body: Record<string, unknown>): ModelEntry {
    const name = typeof body.model === 'string' ? body.model : ''
    return this.models?.find((entry) => entry.model === name) ?? simulationModel('deepseek', name)
  }

  private simulateUnits(
    trie: PrefixTrie<NodeState>,
    rules: DeepSeekCacheRules,
    request: SimulationRequest,
    prompt: Prompt,
    output: number,
    scale: number,
    probes: Probes,
  ): Simulation {
    const { at } = request
    const found = this.readUnits(trie, prompt, at, rules, UNBOUNDED_READ)
    const { path } = found
    const unitRead = found.hit?.tokens ?? 0
    const read = onGrid(unitRead, rules.readGranularityTokens)
    const measured = counterfactualTrace({
      previous: request.previous,
      current: prompt,
      actual: { read, shortfall: found.shortfall },
      probe: probes.own,
      otherwise: 'ttl-expired',
      switched: probes.switched,
      at,
      meter: this.meter,
    })
    if (found.hit !== undefined) found.hit.state.lastUsed = at
    const shortfall = found.shortfall

    // Persist: common prefix with earlier requests, input end, output end, fixed intervals.
    const availableAt = at + rules.persistDelaySeconds
    const fresh = (): UnitState => ({ availableAt, lastUsed: at })
    const common = this.commonPosition(trie, prompt, path, scale)
    const cacheable = prompt.segments.length
    const extended = this.withOutput(prompt, request, scale)
    const outputEnd = {
      depth: extended.segments.length,
      textTokens: 0,
      tokens: tokensThrough(extended, extended.segments.length),
    }
    // One insert stores the input and the answer; the units are marks on its nodes.
    const nodes = trie.insert(extended, extended.segments.length, () => ({}))
    const mark = (position: UnitPosition) =>
      this.markUnit(
        position.depth === 0 ? trie.root : nodes[position.depth - 1],
        extended,
        position,
        fresh,
        scale,
      )
    if (common.tokens > unitRead) mark(common)
    mark({ depth: cacheable, textTokens: 0, tokens: tokensThrough(prompt, cacheable) })
    mark(outputEnd)
    if (rules.intervalTokens > 0) {
      for (let tokens = rules.intervalTokens; tokens < outputEnd.tokens; tokens += rules.intervalTokens) {
        mark(this.positionAt(extended, tokens, scale))
      }
    }
    return {
      prompt,
      counts: unwrittenCounts(prompt, read, output),
      trace: {
        carry: {
          tokens: onGrid(outputEnd.tokens, rules.readGranularityTokens),
          liveUntil: at + rules.evictionSeconds,
        },
        matched: common.tokens,
        ...(shortfall !== undefined ? { shortfall } : {}),
        ...measured,
      },
    }
  }

  /**
   * The deepest live unit the prompt contains whole (a unit is readable once persisted and until evicted).
   * `bounds` caps the unit's tokens and lifts eviction for a counterfactual probe.
   */
  private readUnits(
    trie: PrefixTrie<NodeState>,
    prompt: Prompt,
    at: number,
    rules: DeepSeekCacheRules,
    bounds: ReadBounds,
  ): UnitRead {
    const persisted = (state: UnitState) => state.availableAt <= at
    const live = (state: UnitState) =>
      persisted(state) && (bounds.ignoreExpiry || at - state.lastUsed < rules.evictionSeconds)
    const path = trie.walk(prompt)
    let hit: UnitRead['hit']
    let deepestExpired = 0
    const consider = (tokens: number, state: UnitState) => {
      if (tokens > bounds.limit) return
      if (live(state)) {
        if (hit === undefined || tokens > hit.tokens) hit = { tokens, state }
      } else if (persisted(state)) {
        deepestExpired = Math.max(deepestExpired, tokens)
      }
    }
    // From the deepest position back: the first live unit is the deepest one, so the scan stops there.
    for (let depth = path.length; depth >= 0 && hit === undefined; depth -= 1) {
      const state = (depth === 0 ? trie.root : path[depth - 1])?.data
      const segment = prompt.segments[depth]
      if (segment !== undefined) {
        for (const partial of state?.partials ?? []) {
          if (partial.frame !== segment.frame) continue
          if (this.counter.commonPrefixOf(partial, segment) < partial.textTokens) continue
          consider(tokensThrough(prompt, depth) + partial.tokens, partial)
        }
      }
      if (state?.unit !== undefined && depth > 0) consider(tokensThrough(prompt, depth), state.unit)
    }
    const read = hit?.tokens ?? 0
    return { path, hit, ...(deepestExpired > read ? { shortfall: 'ttl-expired' as const } : {}) }
  }

  /** Where the request stops sharing tokens with every earlier request (units or not). */
  private commonPosition(
    trie: PrefixTrie<NodeState>,
    prompt: Prompt,
    path: Array<TrieNode<NodeState>>,
    scale: number,
  ): UnitPosition {
    const depth = path.length
    const segment = prompt.segments[depth]
    const textTokens =
      segment === undefined
        ? 0
        : (trie.longestShared(
            path[depth - 1] ?? trie.root,
            segment,
            () => true,
            (stored) => this.counter.tokensOf(stored),
          ) ?? 0)
    const inside =
      textTokens > 0 && segment !== undefined ? segment.framing + scaleTokens(textTokens, scale) : 0
    return { depth, textTokens, tokens: tokensThrough(prompt, depth) + inside }
  }

  /** The unit position `tokens` into a prompt. */
  private positionAt(prompt: Prompt, tokens: number, scale: number): UnitPosition {
    let depth = 0
    while (depth < prompt.segments.length && tokensThrough(prompt, depth + 1) <= tokens) depth += 1
    const segment = prompt.segments[depth]
    const before = tokensThrough(prompt, depth)
    if (segment === undefined || tokens - before <= segment.framing)
      return { depth, textTokens: 0, tokens: before }
    const textTokens = Math.floor((tokens - before - segment.framing) / scale)
    return { depth, textTokens, tokens: before + segment.framing + scaleTokens(textTokens, scale) }
  }

  /** Store the prompt's path through `position` and mark a unit there. */
  /** Mark a unit at `position`: on `node` itself, or inside the segment after it (a partial unit). */
  private markUnit(
    node: TrieNode<NodeState> | undefined,
    prompt: Prompt,
    position: UnitPosition,
    fresh: () => UnitState,
    scale: number,
  ): void {
    if (node === undefined) return
    node.data ??= {}
    const state = node.data
    if (position.textTokens === 0) {
      if (position.depth > 0) state.unit = refreshed(state.unit, fresh())
      return
    }
    const segment = prompt.segments[position.depth] as Segment
    state.partials ??= []
    const partials = state.partials
    const existing = partials.find(
      (partial) =>
        partial.frame === segment.frame &&
        partial.textTokens === position.textTokens &&
        this.counter.commonPrefixOf(partial, segment) >= position.textTokens,
    )
    if (existing !== undefined) {
      Object.assign(existing, refreshed(existing, fresh()))
      return
    }
    const partial = {
      ...fresh(),
      frame: segment.frame,
      text: segment.text,
      textTokens: position.textTokens,
      tokens: segment.framing + scaleTokens(position.textTokens, scale),
    }
    // A long text's tokens stay with the stored unit, as with a segment (while the request holds them).
    if (partial.text.length >= LONG_TEXT_CHARACTERS) this.counter.tokensOf(partial)
    partials.push(partial)
  }

  /**
   * The prompt followed by the answer, rendered as the next request will carry it: with its reasoning
   * when the turn calls tools (the answer's own calls, or earlier ones since the latest user message).
   */
  private withOutput(prompt: Prompt, request: SimulationRequest, scale: number): Prompt {
    const { output } = request
    const text = output.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
    const calls = output.content.flatMap((block) =>
      block.type === 'tool-call'
        ? [{ id: block.callId, type: 'function', function: { name: block.name, arguments: block.arguments } }]
        : [],
    )
    const message = {
      role: 'assistant',
      ...(request.reasoning !== undefined ? { reasoning_content: request.reasoning } : {}),
      content: text === '' ? null : text,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    }
    const messages = Array.isArray(request.body.messages) ? request.body.messages : []
    // The answer follows every message of the body: the latest user message is the body's.
    const kept = deepseekKeepsReasoning(message, messages.length, latestUserMessage(messages))
    const tail = linearizeChat({ messages: [message] }, this.counter, scale, {
      remember: false,
      reasoning: kept ? 'all' : 'none',
    })
    const segments = prompt.segments.concat(tail.segments)
    let total = tokensThrough(prompt, prompt.segments.length)
    const cumulative = prompt.cumulative.slice()
    for (const segment of tail.segments) {
      total += segment.tokens
      cumulative.push(total)
    }
    // The input's segments lead unchanged: the trie walks over them without comparing.
    return {
      segments,
      cumulative,
      trailing: 0,
      total,
      base: { segments: prompt.segments, count: prompt.segments.length },
    }
  }

  private simulateLegacy(
    trie: PrefixTrie<NodeState>,
    rules: DeepSeekCacheRules,
    request: SimulationRequest,
    prompt: Prompt,
    output: number,
    probes: Probes,
  ): Simulation {
    const { at } = request
    const scale = this.model(request.body).tokenScale
    const found = this.readLegacy(trie, prompt, at, rules, scale, UNBOUNDED_READ)
    const { read, common } = found
    const measured = counterfactualTrace({
      previous: request.previous,
      current: prompt,
      actual: found,
      probe: probes.own,
      otherwise: 'ttl-expired',
      switched: probes.switched,
      at,
      meter: this.meter,
    })
    for (const node of trie.insert(prompt, prompt.segments.length, () => ({}))) {
      node.data ??= {}
      node.data.unit = { availableAt: at, lastUsed: at }
    }
    const cacheable = tokensThrough(prompt, prompt.segments.length)
    return {
      prompt,
      counts: unwrittenCounts(prompt, read, output),
      trace: {
        carry: {
          tokens: Math.floor(cacheable / rules.legacyUnitTokens) * rules.legacyUnitTokens,
          liveUntil: at + rules.evictionSeconds,
        },
        matched: common,
        ...(found.shortfall !== undefined ? { shortfall: found.shortfall } : {}),
        ...measured,
      },
    }
  }

  /**
   * The legacy read: the longest live common prefix with earlier requests, in whole storage units.
   * `bounds` caps the prefix and lifts eviction for a counterfactual probe.
   */
  private readLegacy(
    trie: PrefixTrie<NodeState>,
    prompt: Prompt,
    at: number,
    rules: DeepSeekCacheRules,
    scale: number,
    bounds: ReadBounds,
  ): { read: number; common: number; shortfall: Shortfall | undefined; stored: number } {
    const live = (state: NodeState | undefined) =>
      state?.unit !== undefined && (bounds.ignoreExpiry || at - state.unit.lastUsed < rules.evictionSeconds)
    const path = trie.walk(prompt)
    let depth = 0
    while (depth < path.length && live(path[depth]?.data)) depth += 1
    const stored =
      depth === path.length
        ? this.commonPosition(trie, prompt, path, scale).tokens
        : tokensThrough(prompt, depth)
    const common = Math.min(stored, bounds.limit)
    const unit = rules.legacyUnitTokens
    const read = Math.floor(common / unit) * unit
    const walked = tokensThrough(prompt, path.length)
    const expired = depth < path.length && Math.floor(walked / unit) * unit > read
    if (expired) return { read, common, shortfall: 'ttl-expired', stored: walked }
    return { read, common, shortfall: read === 0 && common > 0 ? 'below-minimum' : undefined, stored: walked }
  }
}

/**
 * A unit's tokens as the API reports them read: rounded down to the read grid (`grid` 0: exact). The live
 * V4 logs read only multiples of 128, below the exact end of the previous answer
 * (notes/2026-11-30-calibration.md).
 */
function onGrid(tokens: number, grid: number): number {
  return grid > 0 ? Math.floor(tokens / grid) * grid : tokens
}

function refreshed(current: UnitState | undefined, next: UnitState): UnitState {
  if (current === undefined) return next
  return {
    availableAt: Math.min(current.availableAt, next.availableAt),
    lastUsed: Math.max(current.lastUsed, next.lastUsed),
  }
}
