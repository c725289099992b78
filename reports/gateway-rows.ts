// Both sides of a gateway as rows: the client's requests paired with what the gateway sent upstream,
// what changed in each pair (gateway-changes.ts), and the two routes' rows through the one row core — the
// direct route (the client's requests simulated straight to the provider) as the baseline, the gateway
// route (the upstream side as served) labelled with the client's conversation and provider, so `check`
// compares them session by session and a request that lost cache across the gateway names the change.

import { answered, type CapturedExchange } from '../providers/wire/exchange.ts'
import { lastUserText } from '../providers/wire/wire-text.ts'
import { type CaptureLabels, captureRows } from './capture-rows.ts'
import { type GatewayChange, gatewayChanges, usageChanges } from './gateway-changes.ts'
import type { GatewayChangeKind, StepRow } from './types.ts'

/** A client request and the request the gateway sent upstream for it. */
export interface GatewayPair {
  client: CapturedExchange
  upstream: CapturedExchange
  changes: GatewayChange[]
}

/** What one pair cost across the gateway against the direct route. */
export interface GatewayPairCost {
  pair: GatewayPair
  /** The direct route's row of the client's request, and the gateway route's row. */
  direct: StepRow
  gateway: StepRow
  /** Tokens the direct route read from the cache and the gateway route did not (0 when not known). */
  lostTokens: number
  /**
   * The gateway route's cost minus the direct route's (negative when the gateway saved); 0 when not known:
   * the gateway route's row has no usage (`gateway.usageNotReported`).
   */
  extraUsd: number
}

/** Both routes of a gateway, pair by pair. */
export interface GatewayRoutes {
  /** The direct route's rows: the baseline. */
  direct: StepRow[]
  /** The gateway route's rows, under the client's conversations and provider. */
  gateway: StepRow[]
  pairs: GatewayPairCost[]
  /** Client requests no upstream request was found for (the gateway answered them itself, or failed). */
  unpaired: CapturedExchange[]
}

/** The text a pair is matched on: the latest user text, which a gateway forwards (translated or not). */
const matchText = (exchange: CapturedExchange): string =>
  exchange.request === undefined ? '' : lastUserText(exchange.request)

/**
 * Pair each client request (in order) with the next upstream request not yet paired whose latest user text
 * is the same, else the next one in order: a gateway forwards in order, and may add requests of its own.
 * Both sides need their bodies (`keepBodies`).
 */
export function pairSides(
  client: readonly CapturedExchange[],
  upstream: readonly CapturedExchange[],
): { pairs: GatewayPair[]; unpaired: CapturedExchange[] } {
  const pairs: GatewayPair[] = []
  const unpaired: CapturedExchange[] = []
  let cursor = 0
  for (const sent of client) {
    if (sent.request === undefined) {
      unpaired.push(sent)
      continue
    }
    const text = matchText(sent)
    let index = upstream.findIndex((candidate, at) => at >= cursor && matchText(candidate) === text)
    if (index < 0) index = cursor < upstream.length ? cursor : -1
    const forwarded = index < 0 ? undefined : upstream[index]
    if (forwarded?.request === undefined) {
      unpaired.push(sent)
      continue
    }
    cursor = index + 1
    const wire = gatewayChanges(
      { api: sent.api, body: sent.request },
      { api: forwarded.api, body: forwarded.request },
    )
    // What the client was told of its usage compares only where both sides were answered.
    const told =
      answered(sent) && answered(forwarded)
        ? usageChanges(sent.usage, {
            api: forwarded.api,
            body: forwarded.request,
            usage: forwarded.usage,
            counted: forwarded.simulation?.counts,
          })
        : []
    pairs.push({ client: sent, upstream: forwarded, changes: [...wire, ...told] })
  }
  return { pairs, unpaired }
}

/**
 * Which change a lost read is put down to when a pair has several: the likeliest cache killer first. What
 * the client is told of its usage never costs a read, so it is never the cause.
 */
const CAUSE_ORDER: readonly GatewayChangeKind[] = [
  // Another model has another cache: nothing the client's model cached is read.
  'gateway-model-changed',
  'gateway-cache-key-overwritten',
  'gateway-cache-marks-dropped',
  'gateway-system-prefixed',
  'gateway-system-rewritten',
  'gateway-blocks-injected',
  'gateway-blocks-stripped',
  'gateway-tools-reordered',
  'gateway-tools-changed',
  'gateway-cache-marks-moved',
  'gateway-cache-key-set',
  'gateway-cache-key-dropped',
  'gateway-cache-marks-added',
  'gateway-fields-dropped',
  'gateway-wire-translated',
]

/**
 * What the provider billed for an upstream request it answered: what it reported, else, where the
 * simulator served it, the simulator's counts (the simulated provider's own bill). A gateway that streams
 * without asking for usage (`stream_options.include_usage`) is told none, but the provider bills the
 * request all the same. A live provider's request told no usage keeps none: the simulator's prediction is
 * not a bill, so its row says "usage not reported".
 */
function billedUsage(exchange: CapturedExchange): Pick<CapturedExchange, 'usage'> {
  if (exchange.usage !== undefined || exchange.status < 200 || exchange.status >= 300) return {}
  const counts = exchange.simulation?.predicted === false ? exchange.simulation.counts : undefined
  if (counts === undefined) return {}
  return {
    usage: {
      input: counts.input,
      uncached: counts.uncached,
      cacheRead: counts.read,
      cacheWrite: counts.write,
      cacheWrite5m: counts.write5m,
      cacheWrite1h: counts.write1h,
      output: counts.output,
      ...(counts.reasoning !== undefined ? { reasoning: counts.reasoning } : {}),
      raw: null,
    },
  }
}

/**
 * The change a pair's lost read is named by. Across a translated wire the model is always another vendor's:
 * the translation is the story there, not the model.
 */
export function leadingChange(changes: readonly GatewayChange[]): GatewayChange | undefined {
  const translated = changes.some((change) => change.kind === 'gateway-wire-translated')
  for (const kind of CAUSE_ORDER) {
    if (translated && kind === 'gateway-model-changed') continue
    const change = changes.find((candidate) => candidate.kind === kind)
    if (change !== undefined) return change
  }
  return undefined
}

/**
 * Both routes' rows. `direct[i]` is the direct route's exchange of `pairs[i].client` (reports/observed/gateway/
 * direct.ts). On the same provider, a gateway row that read less than the direct route names the pair's
 * leading change as its cause, every change at its node, the direct route's read as its ideal and the
 * direct route's cost as its ideal cost: its lost tokens and dollars are what the gateway cost. Across a
 * translated wire the reads are in other units: a row names the change only where its own conversation
 * upstream lost a read (its counterfactual), and the extra dollars are the two routes' costs.
 */
export function gatewayRoutes(
  pairs: readonly GatewayPair[],
  direct: readonly (CapturedExchange | undefined)[],
  labels: CaptureLabels,
  unpaired: readonly CapturedExchange[] = [],
): GatewayRoutes {
  const kept = pairs.flatMap((pair, index) => {
    const route = direct[index]
    return route === undefined ? [] : [{ pair, route }]
  })
  const directRows = captureRows(
    kept.map(({ route }) => route),
    labels,
  )
  // The upstream side under the client's place: a gateway that changes the key a conversation is told by
  // must not split the client's conversation into many.
  const gatewayRows = captureRows(
    kept.map(({ pair, route }) => ({
      ...pair.upstream,
      ...billedUsage(pair.upstream),
      session: route.session,
      conversation: route.conversation,
      kind: route.kind,
      turn: route.turn,
      step: route.step,
      attempt: route.attempt,
    })),
    labels,
  )
  const costs: GatewayPairCost[] = []
  const gateway: StepRow[] = []
  for (const [index, { pair }] of kept.entries()) {
    const directRow = directRows[index] as StepRow
    const served = gatewayRows[index] as StepRow
    // Reads compare across the gateway only on the same provider: a translated request is tokenized and
    // cached by other rules (its reads are in other units), so its loss is its own conversation's, by its
    // own counterfactual, not the direct route's read minus its own.
    const comparable = served.provider === directRow.provider
    // A gateway row without usage read an unknown amount: it lost nothing known and names no cause.
    const known = served.usageNotReported !== true
    const lostTokens = !known
      ? 0
      : comparable
        ? Math.max(0, directRow.cacheReadTokens - served.cacheReadTokens)
        : served.lostTokens
    const change = leadingChange(pair.changes)
    const row: StepRow = {
      ...served,
      provider: directRow.provider,
      ...(change !== undefined && lostTokens > 0 && served.ok
        ? {
            breakCause: change.kind,
            breakNode: pair.changes.map((each) => `${each.kind}: ${each.detail}`).join('; '),
            ...(comparable
              ? {
                  idealCacheReadTokens: directRow.cacheReadTokens,
                  lostTokens,
                  idealCostUsd: directRow.costUsd,
                }
              : {}),
          }
        : {}),
    }
    gateway.push(row)
    costs.push({
      pair,
      direct: directRow,
      gateway: row,
      lostTokens,
      extraUsd: known ? row.costUsd - directRow.costUsd : 0,
    })
  }
  return { direct: directRows, gateway, pairs: costs, unpaired: [...unpaired] }
}
