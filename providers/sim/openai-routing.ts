// Which machine of OpenAI's fleet serves a request, for both cache models: a hash of the model,
// `prompt_cache_key` and the prompt start, spilling to extra machines under load (with a seed only).

import { hashString, type Random } from '../../harness/random.ts'
import type { TokenCounter } from './tokens.ts'
import { PrefixTrie } from './trie.ts'
import type { Prompt, Segment, TrieMeter } from './types.ts'

/** The machine a request was routed to and the routing key that chose it. */
export interface Route {
  machine: number
  key: string
}

/** Routes requests to machines; remembers each key's recent traffic for overflow. */
export class OpenAIRouter {
  private readonly counter: TokenCounter
  private readonly random: Random | undefined
  private readonly overflow: boolean
  private readonly traffic = new Map<string, number[]>()
  /**
   * The token ids the latest routing keys took of a segment cut short by the routing budget, most recent
   * first: a session's system prompt is the same object on every request (segments never change once
   * built), so its ids are joined once rather than twice a request. A few entries of a few kilobytes; the
   * segments are held weakly, so a pruned one (a text of megabytes) is not kept alive here.
   */
  private cutIds: { segment: WeakRef<Segment>; budget: number; ids: string }[] = []

  /** `random` is the simulator's one seeded stream, shared with the eviction times it samples. */
  constructor(counter: TokenCounter, random: Random | undefined, overflow: boolean) {
    this.counter = counter
    this.random = random
    this.overflow = overflow && random !== undefined
  }

  /** The machine a request lands on: a hash of the prompt start and the cache key, unless it overflows. */
  route(
    routingTokens: number,
    machines: number,
    overflowRpm: number,
    body: Record<string, unknown>,
    prompt: Prompt,
    at: number,
  ): Route {
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

  /**
   * The route an unchanged extension takes: the request's own (`route`) when it shares its key, else its
   * key's hash. After a model switch there is no own route: the key names the other model.
   */
  candidateRoute(
    routingTokens: number,
    machines: number,
    body: Record<string, unknown>,
    candidate: Prompt,
    route: Route | undefined,
  ): Route {
    const key = this.routeKey(routingTokens, body, candidate)
    return {
      machine: route !== undefined && key === route.key ? route.machine : hashString(key) % machines,
      key,
    }
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
        parts.push(segment.frame, this.idsOf(segment, textBudget))
        budget = 0
      }
    }
    return String(hashString(parts.join('\u0003')))
  }

  /** The first `budget` token ids of a segment's text, joined with commas. */
  private idsOf(segment: Segment, budget: number): string {
    const known = this.cutIds.find((cut) => cut.budget === budget && cut.segment.deref() === segment)
    if (known !== undefined) return known.ids
    // Tokenized only as far as the budget reaches (the whole text's first tokens).
    const ids = this.counter.firstTokensOf(segment, budget).join(',')
    this.cutIds = [{ segment: new WeakRef(segment), budget, ids }, ...this.cutIds.slice(0, CUT_IDS_KEPT - 1)]
    return ids
  }
}

/** Segments whose cut ids a router remembers. */
const CUT_IDS_KEPT = 4

/** One machine's store for one model (created empty on first use): a cached prefix is one model's KV state. */
export function machine<T>(
  machines: Map<string, PrefixTrie<T>>,
  model: string,
  index: number,
  meter: TrieMeter,
): PrefixTrie<T> {
  const key = `${model}\u0000${index}`
  let trie = machines.get(key)
  if (trie === undefined) {
    trie = new PrefixTrie<T>(meter)
    machines.set(key, trie)
  }
  return trie
}
