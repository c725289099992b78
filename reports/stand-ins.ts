// Models a run priced as another catalog model: each row's price source (`catalog`, or `stand-in <model>`)
// and, per recorded model, the requests and dollars that rest on its stand-in's prices, told once per model.

import type { ProviderId } from '../harness/types.ts'
import { simulationModel, vendorOf } from '../providers/catalog.ts'
import { dollarText } from './text-table.ts'
import type { StepRow } from './types.ts'

/** A recorded model the catalog lacks, the catalog model priced in its place, and what rests on it. */
export interface StandInUse {
  model: string
  standIn: string
  /** Answered requests of the model. */
  requests: number
  /** Their cost at the stand-in's prices. */
  costUsd: number
}

/** Where a row's dollars come from: the catalog's prices for its model, or a stand-in's. */
export function priceSource(row: Pick<StepRow, 'simulatedAs'>): string {
  return row.simulatedAs === undefined ? 'catalog' : `stand-in ${row.simulatedAs}`
}

/** The stand-in a `price_source` cell names, or undefined for `catalog` (or an empty cell). */
export function standInOf(cell: string | undefined): string | undefined {
  return cell?.startsWith('stand-in ') === true ? cell.slice('stand-in '.length) : undefined
}

/** Stand-in uses summed over rows, in the order the models were first met. */
export class StandInTally {
  private readonly uses = new Map<string, StandInUse>()
  private total = 0

  add(row: Pick<StepRow, 'model' | 'simulatedAs' | 'costUsd' | 'ok'>): void {
    if (!row.ok) return
    this.total += row.costUsd
    if (row.simulatedAs === undefined) return
    const use = this.uses.get(row.model) ?? {
      model: row.model,
      standIn: row.simulatedAs,
      requests: 0,
      costUsd: 0,
    }
    use.requests += 1
    use.costUsd += row.costUsd
    this.uses.set(row.model, use)
  }

  /** Every model priced as a stand-in. */
  result(): StandInUse[] {
    return [...this.uses.values()]
  }

  /** The dollars of every row added, stand-in or not. */
  totalUsd(): number {
    return this.total
  }
}

/** The stand-in uses of some rows. */
export function standInUses(rows: ReadonlyArray<Pick<StepRow, 'model' | 'simulatedAs' | 'costUsd' | 'ok'>>): {
  uses: StandInUse[]
  totalUsd: number
} {
  const tally = new StandInTally()
  for (const row of rows) tally.add(row)
  return { uses: tally.result(), totalUsd: tally.totalUsd() }
}

/** One line per model priced as a stand-in, with the dollars that rest on the stand-in's prices. */
export function standInLines(uses: readonly StandInUse[], totalUsd: number): string[] {
  return uses.map(
    (use) =>
      `${use.model} is not in the catalog: priced and simulated as ${use.standIn}; ${dollarText(use.costUsd)} of ${dollarText(totalUsd)} (${use.requests} request${use.requests === 1 ? '' : 's'}) rests on ${use.standIn}'s prices`,
  )
}

/**
 * One line per model of a calibration the catalog lacks: its predictions use its stand-in's cache rules
 * (calibrate compares tokens and prices nothing).
 */
export function standInRuleLines(models: ReadonlyArray<{ provider: ProviderId; model: string }>): string[] {
  const lines = new Map<string, string>()
  for (const { provider, model } of models) {
    const standIn = simulationModel(vendorOf(provider), model).simulatedAs
    if (standIn !== undefined && !lines.has(model))
      lines.set(
        model,
        `${model} is not in the catalog: its predictions use the cache rules of its stand-in ${standIn}`,
      )
  }
  return [...lines.values()]
}
