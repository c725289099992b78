// OpenAI's prompt cache. Before GPT-5.6: automatic prefix caching from 1024 tokens in 128-token steps,
// per machine, with requests routed by a hash of the prompt start and `prompt_cache_key`, and idle
// eviction. GPT-5.6 and later: reads at the conversation's breakpoint entries; writes at the implicit
// breakpoint on the latest message and the request's latest explicit markers (four at most, earlier
// markers read-only), billed separately.

import { hashString, type Random, seededRandom } from '../../harness/random.ts'
import {
  type ModelEntry,
  type OpenAIBreakpointRules,
  type OpenAIPrefixRules,
  simulationModel,
} from '../catalog.ts'
import { counterfactual, UNBOUNDED_READ } from './counterfactual.ts'
import { linearizeChat, linearizeResponses } from './linearize-openai.ts'
import { type CacheOptions, cacheOptions, invalidRequest } from './openai-cache-fields.ts'
import { outputTokens } from './output.ts'
import { scaleTokens, tokensThrough } from './prompt.ts'
import { sharedTokenCounter, type TokenCounter } from './tokens.ts'
import { childrenOf, PrefixTrie, type TrieNode } from './trie.ts'
import type {
  Breakpoint,
  PlacedBreakpoint,
  Prompt,
  ReadBounds,
  Segment,
  Shortfall,
  Simulation,
  SimulationRequest,
  SimulatorOptions,
} from './types.ts'

/**
 * When a group of cached prefix nodes was last used and how long it stays idle before eviction. The
 * nodes of one session's path share one: the session's next request, which extends that path, renews
 * them all by renewing it.
 */
interface Touch {
  lastUsed: number
  /** Idle lifetime in seconds. */
  retention: number
}

interface PrefixEntry {
  touch: Touch
}

/** What a prompt read from a machine's prefix store, and the machine's last path it shares. */
interface PrefixRead {
  read: number
  /** Tokens matched before the minimum and increments. */
  matched: number
  /** Leading segments shared with the machine's last path. */
  shared: number
  last: LastPath | undefined
  shortfall?: Shortfall
}

/** The last request a machine served: its prompt's segments, its path, and the touch its nodes share. */
interface LastPath {
  segments: readonly Segment[]
  path: Array<TrieNode<PrefixEntry>>
  touch: Touch
  /** Every node of the path shares `touch` (none kept a longer lifetime of its own). */
  uniform: boolean
}

interface BreakpointEntry {
  /** Set when a breakpoint wrote this prefix; the readable lifetime ends here. */
  liveUntil?: number
  /** Order of the write within its conversation, for the read horizon. */
  serial?: number
  conversation?: string
}

type Api = 'chat' | 'responses'

/** Models a fleet of OpenAI cache machines. One instance is one organization's cache. */
export class OpenAICacheSimulator {
  private readonly counter: TokenCounter
  private readonly random: Random | undefined
  private readonly overflow: boolean
  private readonly models: readonly ModelEntry[] | undefined
  /** Prefix stores by model and machine: a cached prefix is one model's KV state, never another's. */
  private readonly prefixMachines = new Map<string, PrefixTrie<PrefixEntry>>()
  private readonly lastPaths = new WeakMap<PrefixTrie<PrefixEntry>, LastPath>()
  private readonly breakpointMachines = new Map<string, PrefixTrie<BreakpointEntry>>()
  private readonly traffic = new Map<string, number[]>()
  private readonly conversations = new Map<string, number>()

  constructor(options: SimulatorOptions = {}) {
    this.counter = options.counter ?? sharedTokenCounter
    this.random = options.seed === undefined ? undefined : seededRandom(options.seed)
    this.overflow = options.overflow === true && this.random !== undefined
    this.models = options.models
  }

  /** Linearize a body of the given wire API with the model's token scale. */
  linearize(api: Api, body: Record<string, unknown>): Prompt {
    const entry = this.model(body)
    return api === 'chat'
      ? linearizeChat(body, this.counter, entry.tokenScale)
      : linearizeResponses(body, this.counter, entry.tokenScale)
  }

  /** Whether the model reports cache writes (GPT-5.6 and later). */
  reportsWrites(model: string): boolean {
    return this.model({ model }).cache.kind === 'openai-breakpoint'
  }

  /** Simulate one request; throws the API's 400 (`SimulatorRejection`) for a body it refuses. */
  simulate(api: Api, request: SimulationRequest): Simulation {
    const entry = this.model(request.body)
    const options = cacheOptions(api, request.body, entry.cache.kind === 'openai-breakpoint')
    const prompt = this.linearize(api, request.body)
    const output = scaleTokens(outputTokens(request.output, this.counter), entry.tokenScale)
    return entry.cache.kind === 'openai-breakpoint'
      ? this.simulateBreakpoints(entry.cache, options, request, prompt, output)
      : this.simulatePrefix(entry.cache as OpenAIPrefixRules, request, prompt, output)
  }

  private model(body: Record<string, unknown>): ModelEntry {
    const name = typeof body.model === 'string' ? body.model : ''
    return this.models?.find((entry) => entry.model === name) ?? simulationModel('openai', name)
  }

  // ── Before GPT-5.6 ────────────────────────────────────────────────────────────────────────────

  private simulatePrefix(
    rules: OpenAIPrefixRules,
    request: SimulationRequest,
    prompt: Prompt,
    output: number,
  ): Simulation {
    const { body, at } = request
    const retention = this.retentionSeconds(rules, body)
    const route = this.route(rules.routingTokens, rules.machines, rules.overflowRpm, body, prompt, at)
    const model = String(body.model)
    const trie = machine(this.prefixMachines, model, route.machine)
    const cacheable = prompt.segments.length
    const scale = this.model(body).tokenScale
    const found = this.readPrefix(trie, prompt, at, rules, scale, UNBOUNDED_READ)
    const { read, matched, shared, last } = found
    const alive = (touch: Touch) => at - touch.lastUsed < touch.retention
    const counterfactualRead =
      request.previous === undefined
        ? undefined
        : counterfactual(
            request.previous.prompt,
            prompt,
            { read, ...(found.shortfall !== undefined ? { shortfall: found.shortfall } : {}) },
            (candidate, bounds) => {
              // An unchanged extension is routed like the previous request; a warm cache is its machine's.
              const home = request.previous?.machine
              const index =
                bounds.unbounded && home !== undefined
                  ? home
                  : this.candidateMachine(rules.routingTokens, rules.machines, body, candidate, route)
              const probed = this.readPrefix(
                machine(this.prefixMachines, model, index),
                candidate,
                at,
                rules,
                scale,
                bounds,
              )
              return {
                read: probed.read,
                ...(probed.shortfall !== undefined ? { shortfall: probed.shortfall } : {}),
              }
            },
            'routing-miss',
          )

    // The whole prompt is cached on the machine after the request (writes are free before GPT-5.6).
    const extendsLast = last?.uniform === true && shared === last.path.length && shared === prompt.base?.count
    const touch: Touch = extendsLast ? last.touch : { lastUsed: at, retention }
    if (extendsLast) {
      // Renewing the shared touch renews every node of the last path at once.
      touch.retention = alive(touch) ? Math.max(touch.retention, retention) : retention
      touch.lastUsed = at
    }
    const nodes = trie.insert(prompt, cacheable, () => ({ touch }))
    let uniform = true
    for (let index = extendsLast ? shared : 0; index < nodes.length; index += 1) {
      const data = (nodes[index] as TrieNode<PrefixEntry>).data
      if (data === undefined || data.touch === touch) continue
      if (alive(data.touch) && data.touch.retention > touch.retention) {
        // A node still alive keeps the longer lifetime an earlier request promised it, on a touch of its own.
        data.touch = { lastUsed: at, retention: data.touch.retention }
        uniform = false
      } else {
        data.touch = touch
      }
    }
    this.lastPaths.set(trie, { segments: prompt.segments, path: nodes, touch, uniform })
    const cacheableTokens = tokensThrough(prompt, cacheable)
    return {
      prompt,
      counts: counts(prompt.total, read, 0, 0, output),
      trace: {
        carry: {
          tokens: floorToIncrement(cacheableTokens, rules.minTokens, rules.increment),
          liveUntil: at + retention,
        },
        machine: route.machine,
        matched,
        ...(found.shortfall !== undefined ? { shortfall: found.shortfall } : {}),
        ...(counterfactualRead !== undefined ? { counterfactual: counterfactualRead } : {}),
      },
    }
  }

  /**
   * What a prompt reads from one machine's prefix store: the longest live stored prefix, into the first
   * segment not stored whole, in whole increments past the minimum. `bounds` caps the matched tokens and
   * lifts idle eviction for a counterfactual probe.
   */
  private readPrefix(
    trie: PrefixTrie<PrefixEntry>,
    prompt: Prompt,
    at: number,
    rules: OpenAIPrefixRules,
    scale: number,
    bounds: ReadBounds,
  ): PrefixRead {
    const path = trie.walk(prompt, prompt.segments.length)
    const alive = (touch: Touch) => bounds.ignoreExpiry || at - touch.lastUsed < touch.retention
    const live = (data: PrefixEntry | undefined) => data !== undefined && alive(data.touch)
    // The part of the path the machine's last request shared (the same segments) shares its touch.
    const last = this.lastPaths.get(trie)
    const shared =
      last !== undefined && prompt.base?.segments === last.segments
        ? Math.min(prompt.base.count, last.path.length, path.length)
        : 0
    let liveDepth = shared > 0 && last !== undefined && alive(last.touch) ? shared : 0
    if (liveDepth === shared) {
      let checked: Touch | undefined
      for (; liveDepth < path.length; liveDepth += 1) {
        const touch = (path[liveDepth] as TrieNode<PrefixEntry>).data?.touch
        if (touch === undefined) break
        if (touch !== checked && !alive(touch)) break
        checked = touch
      }
    }
    const partial =
      liveDepth === path.length ? this.partialMatch(trie, path, prompt, liveDepth, live, scale) : 0
    const matched = Math.min(tokensThrough(prompt, liveDepth) + partial, bounds.limit)
    const read = floorToIncrement(matched, rules.minTokens, rules.increment)
    const stored = Math.min(tokensThrough(prompt, path.length), bounds.limit)
    let shortfall: Shortfall | undefined
    if (floorToIncrement(stored, rules.minTokens, rules.increment) > read) shortfall = 'ttl-expired'
    else if (read === 0 && matched > 0) shortfall = 'below-minimum'
    return { read, matched, shared, last, ...(shortfall !== undefined ? { shortfall } : {}) }
  }

  /** The machine an unchanged extension lands on: this request's when it shares its route, else its own hash. */
  private candidateMachine(
    routingTokens: number,
    machines: number,
    body: Record<string, unknown>,
    candidate: Prompt,
    route: { machine: number; key: string },
  ): number {
    const key = this.routeKey(routingTokens, body, candidate)
    return key === route.key ? route.machine : hashString(key) % machines
  }

  private retentionSeconds(rules: OpenAIPrefixRules, body: Record<string, unknown>): number {
    const asked = body.prompt_cache_retention ?? rules.defaultRetention
    if (asked === '24h' || asked === 'in-memory-24h') {
      if (!rules.extendedRetention) {
        throw invalidRequest(
          `prompt_cache_retention '24h' is not supported with this model`,
          'prompt_cache_retention',
        )
      }
      return rules.extendedRetentionSeconds
    }
    if (asked !== 'in_memory' && asked !== null) {
      throw invalidRequest(
        `Invalid value for 'prompt_cache_retention': ${JSON.stringify(asked)}`,
        'prompt_cache_retention',
      )
    }
    if (this.random === undefined) return rules.idleEvictionSeconds
    return (
      rules.idleEvictionSeconds +
      this.random.next() * (rules.idleEvictionMaxSeconds - rules.idleEvictionSeconds)
    )
  }

  /** Tokens matched inside the first segment that is not stored whole: same framing, common token prefix. */
  private partialMatch<T>(
    trie: PrefixTrie<T>,
    path: TrieNode<T>[],
    prompt: Prompt,
    depth: number,
    live: (data: T | undefined) => boolean,
    scale: number,
  ): number {
    const segment = prompt.segments[depth]
    if (segment === undefined) return 0
    const parent = path[depth - 1] ?? trie.root
    let best = 0
    for (const child of childrenOf(parent)) {
      const stored = child.segment
      if (stored === undefined || stored.frame !== segment.frame || !live(child.data)) continue
      const common = this.counter.commonPrefix(stored.text, segment.text)
      best = Math.max(best, segment.framing + scaleTokens(common, scale))
    }
    return Math.min(best, segment.tokens)
  }

  /** The routing key of a prompt: the model, `prompt_cache_key` and the first `routingTokens` tokens. */
  private routeKey(routingTokens: number, body: Record<string, unknown>, prompt: Prompt): string {
    const parts: string[] = [String(body.model), String(body.prompt_cache_key ?? '')]
    let budget = routingTokens
    for (const segment of prompt.segments) {
      if (budget <= 0) break
      if (segment.tokens <= budget) {
        parts.push(segment.frame, segment.text)
        budget -= segment.tokens
      } else {
        const textBudget = Math.max(0, budget - segment.framing)
        parts.push(segment.frame, this.counter.tokens(segment.text).slice(0, textBudget).join(','))
        budget = 0
      }
    }
    return String(hashString(parts.join('\u0003')))
  }

  /** The machine a request lands on: a hash of the prompt start and the cache key, unless it overflows. */
  private route(
    routingTokens: number,
    machines: number,
    overflowRpm: number,
    body: Record<string, unknown>,
    prompt: Prompt,
    at: number,
  ): { machine: number; key: string } {
    const key = this.routeKey(routingTokens, body, prompt)
    let machineIndex = hashString(key) % machines
    if (this.overflow && this.random !== undefined) {
      const recent = (this.traffic.get(key) ?? []).filter((time) => at - time < 60)
      recent.push(at)
      this.traffic.set(key, recent)
      const extra = Math.floor((recent.length - 1) / overflowRpm)
      if (extra > 0) {
        const pick = Math.floor(this.random.next() * (extra + 1))
        if (pick > 0) machineIndex = hashString(`${key}#${pick}`) % machines
      }
    }
    return { machine: machineIndex, key }
  }

  // ── GPT-5.6 and later ─────────────────────────────────────────────────────────────────────────

  private simulateBreakpoints(
    rules: OpenAIBreakpointRules,
    options: CacheOptions,
    request: SimulationRequest,
    prompt: Prompt,
    output: number,
  ): Simulation {
    const { body, at } = request
    const ttlSeconds = options.ttl === '30m' ? rules.ttlSeconds : rules.idleEvictionSeconds
    const route = this.route(rules.routingTokens, rules.machines, Number.POSITIVE_INFINITY, body, prompt, at)
    const trie = machine(this.breakpointMachines, String(body.model), route.machine)
    const conversation = `${String(body.model)}:${route.machine}:${String(body.prompt_cache_key ?? route.key)}`
    const serial = this.conversations.get(conversation) ?? 0

    const explicit = prompt.segments.flatMap((segment, index) =>
      segment.breakpoint?.explicit === true ? [index] : [],
    )
    const implicit = options.mode === 'implicit' && prompt.segments.length > 0
    // "If there are no explicit breakpoints, the request does not use prompt caching" (explicit mode).
    const caching = implicit || explicit.length > 0
    const breakpoints = new Set(explicit)
    if (implicit) breakpoints.add(prompt.segments.length - 1)
    const placed: PlacedBreakpoint[] = [...breakpoints]
      .sort((left, right) => left - right)
      .map((index) => ({ index, breakpoint: prompt.segments[index]?.breakpoint ?? IMPLICIT }))
    const marked: Prompt = { ...prompt, placed }

    const found = caching
      ? readBreakpoints(trie, marked, at, conversation, serial, rules, UNBOUNDED_READ)
      : NO_READ
    const readDepth = found.depth
    const read = tokensThrough(prompt, readDepth)
    const counterfactualRead =
      request.previous === undefined
        ? undefined
        : counterfactual(
            request.previous.prompt,
            marked,
            { read, ...(found.missed !== undefined ? { shortfall: found.missed } : {}) },
            (candidate, bounds) => {
              // The counterfactual request has this request's options: without caching it reads nothing.
              if (!caching) return { read: 0 }
              const home = request.previous?.machine
              const index =
                bounds.unbounded && home !== undefined
                  ? home
                  : this.candidateMachine(rules.routingTokens, rules.machines, body, candidate, route)
              const key = `${String(body.model)}:${index}:${String(body.prompt_cache_key ?? route.key)}`
              const probed = readBreakpoints(
                machine(this.breakpointMachines, String(body.model), index),
                candidate,
                at,
                key,
                this.conversations.get(key) ?? 0,
                rules,
                bounds,
              )
              return {
                read: tokensThrough(candidate, probed.depth),
                ...(probed.missed !== undefined ? { shortfall: probed.missed } : {}),
              }
            },
            'routing-miss',
          )
    const refresh = (entry: BreakpointEntry) => {
      entry.liveUntil = Math.max(entry.liveUntil ?? 0, at + ttlSeconds)
    }
    const readEntry = found.path[readDepth - 1]?.data
    if (readDepth > 0 && readEntry !== undefined) refresh(readEntry)

    // Write: the write window past the read, at or above the minimum. A window breakpoint at or before
    // the read is a read point: its entry, when readable, is refreshed, not written again (and no older
    // marker takes its place); markers before the window are read-only.
    const horizon = serial - rules.readHorizon
    let writeDepth = readDepth
    let nextSerial = serial
    for (const index of writeWindow(explicit, implicit ? prompt.segments.length - 1 : undefined, rules)) {
      const depth = index + 1
      if (depth <= readDepth) {
        const entry = found.path[index]?.data
        if (entry !== undefined && reach(entry, at, conversation, horizon, false) === 'readable')
          refresh(entry)
        continue
      }
      if (tokensThrough(prompt, depth) < rules.minTokens) continue
      const nodes = trie.insert(prompt, depth, () => ({}))
      const node = nodes[depth - 1]
      if (node?.data === undefined) continue
      node.data.liveUntil = at + ttlSeconds
      node.data.serial = nextSerial
      node.data.conversation = conversation
      nextSerial += 1
      writeDepth = depth
    }
    this.conversations.set(conversation, nextSerial)
    const write = tokensThrough(prompt, writeDepth) - read
    let shortfall: Shortfall | undefined = found.missed
    if (shortfall === undefined && read === 0 && write === 0 && caching && prompt.total < rules.minTokens)
      shortfall = 'below-minimum'
    const carryTokens = tokensThrough(prompt, Math.max(readDepth, writeDepth))
    return {
      prompt: marked,
      counts: counts(prompt.total, read, write, write, output),
      trace: {
        carry: { tokens: carryTokens, liveUntil: carryTokens > 0 ? at + ttlSeconds : at },
        machine: route.machine,
        matched: read,
        ...(shortfall !== undefined ? { shortfall } : {}),
        ...(counterfactualRead !== undefined ? { counterfactual: counterfactualRead } : {}),
      },
    }
  }
}

/** The marker of the implicit breakpoint OpenAI places on the latest message. */
const IMPLICIT: Breakpoint = { ttl: 'implicit', ttlSeconds: 0, explicit: false }

/**
 * The segments a request may write, in prompt order: the implicit breakpoint (implicit mode) and the
 * latest explicit markers, four writes in all ("With `implicit`, OpenAI creates one implicit breakpoint
 * and writes up to the latest three explicit breakpoints … With `explicit`, … up to the latest four").
 * A marker on the implicit breakpoint's segment is one of the latest three and one entry. Earlier markers
 * are read points only: however many there are, they neither count nor fail the request.
 */
export function writeWindow(
  explicit: readonly number[],
  implicit: number | undefined,
  rules: Pick<OpenAIBreakpointRules, 'maxWritesPerRequest'>,
): number[] {
  const latest = Math.max(0, rules.maxWritesPerRequest - (implicit === undefined ? 0 : 1))
  const window = new Set(explicit.slice(Math.max(0, explicit.length - latest)))
  if (implicit !== undefined) window.add(implicit)
  return [...window].sort((left, right) => left - right)
}

/** What a prompt reads from a machine's breakpoint entries, and why a deeper entry went unread. */
interface BreakpointRead {
  depth: number
  path: Array<TrieNode<BreakpointEntry>>
  missed: Shortfall | undefined
}

/** The read of a request that does not use prompt caching. */
const NO_READ: BreakpointRead = { depth: 0, path: [], missed: undefined }

/**
 * Whether a request can read a breakpoint entry: `readable`, or why not (expired; live but older than its
 * conversation's latest `readHorizon` writes). Undefined where no breakpoint wrote the node.
 */
function reach(
  entry: BreakpointEntry | undefined,
  at: number,
  conversation: string,
  horizon: number,
  ignoreExpiry: boolean,
): 'readable' | 'ttl-expired' | 'lookback-miss' | undefined {
  if (entry?.liveUntil === undefined) return undefined
  if (!ignoreExpiry && at >= entry.liveUntil) return 'ttl-expired'
  // Another conversation's entry (another key) is not counted against this conversation's horizon.
  if (entry.conversation === conversation && (entry.serial ?? 0) < horizon) return 'lookback-miss'
  return 'readable'
}

/**
 * The deepest live breakpoint entry on the prompt's path among its conversation's latest writes (the read
 * horizon: "OpenAI considers up to the latest 50 breakpoints", `readHorizon`), however many content
 * blocks lie between it and the request's end. `bounds` caps the depth in tokens and lifts expiry or the
 * horizon for a counterfactual probe.
 */
function readBreakpoints(
  trie: PrefixTrie<BreakpointEntry>,
  prompt: Prompt,
  at: number,
  conversation: string,
  serial: number,
  rules: OpenAIBreakpointRules,
  bounds: ReadBounds,
): BreakpointRead {
  const path = trie.walk(prompt)
  const horizon = bounds.unbounded ? Number.NEGATIVE_INFINITY : serial - rules.readHorizon
  let depth = 0
  // The deepest entry the request could not read: expired, or live but past the read horizon.
  let missed: { depth: number; cause: Shortfall } | undefined
  for (const [index, node] of path.entries()) {
    const state = reach(node.data, at, conversation, horizon, bounds.ignoreExpiry)
    if (state === undefined || tokensThrough(prompt, index + 1) > bounds.limit) continue
    if (state === 'readable') depth = index + 1
    else missed = { depth: index + 1, cause: state }
  }
  return { depth, path, missed: missed !== undefined && missed.depth > depth ? missed.cause : undefined }
}

function machine<T>(machines: Map<string, PrefixTrie<T>>, model: string, index: number): PrefixTrie<T> {
  const key = `${model}\u0000${index}`
  let trie = machines.get(key)
  if (trie === undefined) {
    trie = new PrefixTrie<T>()
    machines.set(key, trie)
  }
  return trie
}

/** The cacheable part of `matched` tokens: 0 below the minimum, then whole increments past it. */
export function floorToIncrement(matched: number, minimum: number, increment: number): number {
  if (matched < minimum) return 0
  return minimum + Math.floor((matched - minimum) / increment) * increment
}

function counts(input: number, read: number, write: number, write5m: number, output: number) {
  return { input, read, write, write5m, write1h: 0, uncached: input - read - write, output }
}
