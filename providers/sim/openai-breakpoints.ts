// OpenAI's cache from GPT-5.6: reads at the conversation's breakpoint entries; writes at the implicit
// breakpoint on the latest message and the latest explicit markers (four at most), billed separately.

import type { OpenAIBreakpointRules } from '../catalog.ts'
import { counterfactualTrace, type Probe, UNBOUNDED_READ } from './counterfactual.ts'
import type { CacheOptions } from './openai-cache-fields.ts'
import { machine, type OpenAIRouter, type Route } from './openai-routing.ts'
import { tokensThrough } from './prompt.ts'
import type { PrefixTrie, TrieNode } from './trie.ts'
import type {
  Breakpoint,
  PlacedBreakpoint,
  Prompt,
  ReadBounds,
  Shortfall,
  Simulation,
  SimulationRequest,
  TrieMeter,
} from './types.ts'

interface BreakpointEntry {
  /** Set when a breakpoint wrote this prefix; the readable lifetime ends here. */
  liveUntil?: number
  /** Order of the write within its conversation, for the read horizon. */
  serial?: number
  conversation?: string
}

/** The breakpoint stores of every machine, by model, and each conversation's count of writes. */
export class OpenAIBreakpointCache {
  private readonly router: OpenAIRouter
  /** Breakpoint stores by model and machine: a cached prefix is one model's KV state, never another's. */
  private readonly machines = new Map<string, PrefixTrie<BreakpointEntry>>()
  /** Writes so far per conversation (model, machine and cache key): the serial of its next write. */
  private readonly conversations = new Map<string, number>()
  private readonly meter: TrieMeter

  constructor(router: OpenAIRouter, meter: TrieMeter) {
    this.router = router
    this.meter = meter
  }

  /** Remove the entries expired by `at` and the prefixes no breakpoint wrote that lead only to them. */
  prune(at: number): number {
    let removed = 0
    for (const [key, trie] of this.machines) {
      removed += trie.prune((entry) => entry?.liveUntil === undefined || at >= entry.liveUntil)
      if (trie.root.children.size === 0) this.machines.delete(key)
    }
    return removed
  }

  /**
   * Simulate one request of a GPT-5.6 or later model with its validated cache options. `switched` reads
   * the cache of the model the previous request ran on, when that was another model.
   */
  simulate(
    rules: OpenAIBreakpointRules,
    options: CacheOptions,
    request: SimulationRequest,
    prompt: Prompt,
    output: number,
    switched?: Probe,
  ): Simulation {
    const { body, at } = request
    // `ttl` defaults to '30m', the only value the API accepts (an invalid one is refused before this).
    const ttlSeconds = rules.ttlSeconds
    const route = this.router.route(
      rules.routingTokens,
      rules.machines,
      Number.POSITIVE_INFINITY,
      body,
      prompt,
      at,
    )
    const trie = machine(this.machines, String(body.model), route.machine, this.meter)
    const conversation = `${String(body.model)}:${route.machine}:${String(body.prompt_cache_key ?? route.key)}`
    const serial = this.conversations.get(conversation) ?? 0

    const explicit = explicitBreakpoints(prompt)
    const implicit = options.mode === 'implicit' && prompt.segments.length > 0
    const caching = usesCaching(options, prompt, explicit)
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
    const measured = counterfactualTrace({
      previous: request.previous,
      current: marked,
      actual: { read, shortfall: found.missed },
      probe: this.probe(rules, caching, body, at, route, request.previous?.machine),
      otherwise: 'routing-miss',
      switched,
      at,
      meter: this.meter,
    })
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
      counts: {
        input: prompt.total,
        read,
        write,
        write5m: write,
        write1h: 0,
        uncached: prompt.total - read - write,
        output,
      },
      trace: {
        carry: { tokens: carryTokens, liveUntil: carryTokens > 0 ? at + ttlSeconds : at },
        machine: route.machine,
        matched: read,
        ...(shortfall !== undefined ? { shortfall } : {}),
        ...measured,
      },
    }
  }

  /**
   * A read of one model's breakpoint stores (the model `body` names) at `at`, changing nothing: a
   * counterfactual's probe with the request's options (without caching it reads nothing). An unchanged
   * extension is routed as the request was (`route`, none after a model switch); a warm cache is the
   * previous request's machine (`home`).
   */
  probe(
    rules: OpenAIBreakpointRules,
    caching: boolean,
    body: Record<string, unknown>,
    at: number,
    route: Route | undefined,
    home: number | undefined,
  ): Probe {
    const model = String(body.model)
    return (candidate, bounds) => {
      if (!caching) return { read: 0, shortfall: undefined }
      const routed = this.router.candidateRoute(rules.routingTokens, rules.machines, body, candidate, route)
      const index = bounds.unbounded && home !== undefined ? home : routed.machine
      const key = `${model}:${index}:${String(body.prompt_cache_key ?? (route ?? routed).key)}`
      const probed = readBreakpoints(
        machine(this.machines, model, index, this.meter),
        candidate,
        at,
        key,
        this.conversations.get(key) ?? 0,
        rules,
        bounds,
      )
      return {
        read: tokensThrough(candidate, probed.depth),
        shortfall: probed.missed,
        stored: tokensThrough(candidate, probed.path.length),
      }
    }
  }
}

/** The segments an explicit `prompt_cache_breakpoint` marks. */
function explicitBreakpoints(prompt: Prompt): number[] {
  return prompt.segments.flatMap((segment, index) => (segment.breakpoint?.explicit === true ? [index] : []))
}

/**
 * Whether a request uses prompt caching under GPT-5.6 rules: always in implicit mode, and in explicit
 * mode only with a marker ("If there are no explicit breakpoints, the request does not use prompt caching").
 */
export function usesCaching(
  options: CacheOptions,
  prompt: Prompt,
  explicit: readonly number[] = explicitBreakpoints(prompt),
): boolean {
  return (options.mode === 'implicit' && prompt.segments.length > 0) || explicit.length > 0
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
