// A gateway's two recorded captures (the client's side, from a recording front that forwards to the
// gateway, and the upstream side, from the serve the gateway forwards to; both `--record-bodies`) read,
// paired and turned into both routes' rows, and each pair's changes and cost as CSV.

import { stringify } from 'csv-stringify/sync'
import type { CapturedExchange } from '../providers/wire/exchange.ts'
import type { CaptureLabels } from './capture-rows.ts'
import type { GatewayChange } from './gateway-changes.ts'
import { type GatewayRoutes, gatewayRoutes, leadingChange, pairSides } from './gateway-rows.ts'
import { openCapture } from './observed/capture/store.ts'
import { simulateDirect } from './observed/gateway/direct.ts'

/** The scenario column of a gateway's rows. */
export const GATEWAY_SCENARIO = 'gateway'

/** Every exchange of a capture, in the order it was served. */
export function captureExchanges(dir: string, onTorn?: (where: string) => void): CapturedExchange[] {
  const capture = openCapture(dir)
  return capture.sessions
    .flatMap((session) => capture.read(session, onTorn))
    .sort((left, right) => left.seq - right.seq)
}

/** Both routes of a gateway from its client-side and upstream-side captures. */
export function gatewayFromCaptures(
  clientDir: string,
  upstreamDir: string,
  labels: CaptureLabels,
  onTorn?: (where: string) => void,
): GatewayRoutes {
  const { pairs, unpaired } = pairSides(
    captureExchanges(clientDir, onTorn),
    captureExchanges(upstreamDir, onTorn),
  )
  return gatewayRoutes(pairs, simulateDirect(pairs.map((pair) => pair.client)), labels, unpaired)
}

/** Columns of changes.csv: one row per pair. */
export const CHANGES_COLUMNS = [
  'conversation',
  'turn',
  'step',
  'client_api',
  'upstream_api',
  'changes',
  'cause',
  'direct_cache_read_tokens',
  'gateway_cache_read_tokens',
  'lost_tokens',
  'direct_cost_usd',
  'gateway_cost_usd',
  'extra_usd',
] as const

/** A pair's changes as changes.csv's `changes` cell: `kind: detail`, joined by `; `. */
export function changeCell(changes: readonly GatewayChange[]): string {
  return changes.map((change) => `${change.kind}: ${change.detail}`).join('; ')
}

/**
 * changes.csv: each pair's changes across the gateway and what they cost against the direct route; the
 * gateway route's cells are empty where its request has no usage (a live upstream that reported none).
 */
export function changesCsv(routes: GatewayRoutes): string {
  const records = routes.pairs.map(({ pair, direct, gateway, lostTokens, extraUsd }) => {
    const known = gateway.usageNotReported !== true
    return [
      direct.variant,
      String(direct.turn),
      String(direct.step),
      pair.client.api,
      pair.upstream.api,
      changeCell(pair.changes),
      leadingChange(pair.changes)?.kind ?? '',
      String(direct.cacheReadTokens),
      known ? String(gateway.cacheReadTokens) : '',
      known ? String(lostTokens) : '',
      direct.costUsd.toFixed(8),
      known ? gateway.costUsd.toFixed(8) : '',
      known ? extraUsd.toFixed(8) : '',
    ]
  })
  return stringify([[...CHANGES_COLUMNS], ...records])
}
