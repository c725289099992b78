// What `cachelab calibrate` writes and prints: calibration.csv's records (one per step),
// calibration-models.csv's (one per model) and the terminal summary, from reports/calibrate.ts's result.

import { vendorOf } from '../providers/catalog.ts'
import type { CalibrationStep, ModelCalibration, PairCounts } from './calibrate.ts'
import { addPairs } from './calibrate.ts'
import { countText, percentText } from './text-table.ts'

/** The `calibration.csv` columns, in order. */
export const STEP_COLUMNS = [
  'provider',
  'model',
  'session',
  'source',
  'turn',
  'step',
  'gap_s',
  'recorded_input',
  'recorded_read',
  'recorded_write',
  'predicted_read',
  'basis',
  'placement',
  'agreement',
  'note',
] as const

/** The `calibration-models.csv` columns, in order. */
export const MODEL_COLUMNS = [
  'provider',
  'model',
  'requests',
  'sessions',
  'non_zero_reads',
  'reads_on_128',
  'granularity',
  'prediction_grid',
  'best_grid',
  'placements',
  'hit_ratio_min',
  'hit_ratio_max',
  'below_previous_prefix',
  'pairs_5m',
  'pairs_exact',
  'pairs_more',
  'pairs_less',
  'pairs_after_5m',
  'read_after_5m',
  'pairs_after_1h',
  'read_after_1h',
  'write_5m_tokens',
  'write_1h_tokens',
  'token_scale',
  'head_tokens',
  'framing_per_message',
  'exact',
  'within_unit',
  'off',
  'unmeasured',
] as const

/** A step as a CSV record. */
export function stepRecord(step: CalibrationStep): string[] {
  return [
    step.provider,
    step.model,
    step.session,
    step.source,
    step.turn === undefined ? '' : String(step.turn),
    step.step === undefined ? '' : String(step.step),
    step.gapSeconds === undefined ? '' : step.gapSeconds.toFixed(3),
    String(step.recordedInput),
    String(step.recordedRead),
    String(step.recordedWrite),
    step.predictedRead === undefined ? '' : String(step.predictedRead),
    step.basis,
    step.placement ?? '',
    step.agreement,
    step.note,
  ]
}

/** The best-scoring candidate grid (ties: the smaller grid), or empty when no replay scored any. */
function bestGrid(entry: ModelCalibration): string {
  if (entry.gridCandidates.length === 0) return ''
  const best = entry.gridCandidates.reduce((left, right) => (right.exact > left.exact ? right : left))
  return String(best.grid)
}

/** One CSV record per model. */
export function modelRecords(models: readonly ModelCalibration[]): string[][] {
  return models.map((entry) => {
    const ratios = entry.sessions.map((session) => session.hitRatio)
    return [
      entry.provider,
      entry.model,
      String(entry.requests),
      String(entry.sessions.length),
      String(entry.nonZeroReads),
      String(entry.readsOn128),
      String(entry.granularity),
      String(entry.predictionGrid),
      bestGrid(entry),
      Object.entries(entry.placements)
        .map(([placement, count]) => `${placement}:${count}`)
        .join(' '),
      ratios.length > 0 ? Math.min(...ratios).toFixed(6) : '',
      ratios.length > 0 ? Math.max(...ratios).toFixed(6) : '',
      entry.sessions.map((session) => session.belowPreviousPrefix).join(' '),
      String(entry.pairs?.total ?? ''),
      String(entry.pairs?.exact ?? ''),
      String(entry.pairs?.more ?? ''),
      String(entry.pairs?.less ?? ''),
      String(entry.ttl.after5m),
      String(entry.ttl.readAfter5m),
      String(entry.ttl.after1h),
      String(entry.ttl.readAfter1h),
      String(entry.writes.fiveMinute),
      String(entry.writes.oneHour),
      entry.tokenFit === undefined ? '' : String(entry.tokenFit.tokenScale),
      entry.tokenFit === undefined ? '' : String(entry.tokenFit.headTokens),
      entry.tokenFit?.framingPerMessage === undefined ? '' : String(entry.tokenFit.framingPerMessage),
      String(entry.tally.exact),
      String(entry.tally['within-unit']),
      String(entry.tally.off),
      String(entry.tally.unmeasured),
    ]
  })
}

/** Unexplained steps the terminal lists per model (calibration.csv has them all). */
const LISTED_STEPS = 5

/** The terminal summary: per model, what the reads show and how the simulator agrees. */
export function calibrationText(models: readonly ModelCalibration[]): string[] {
  const lines: string[] = []
  for (const entry of models) {
    const ratios = entry.sessions.map((session) => session.hitRatio)
    const below = entry.sessions.map((session) => session.belowPreviousPrefix)
    const measured = entry.tally.exact + entry.tally['within-unit'] + entry.tally.off
    const breakpoints = vendorOf(entry.provider) === 'anthropic' || vendorOf(entry.provider) === 'bedrock'
    const prefix = breakpoints ? 'its read + write' : `its input on the ${entry.granularity}-token grid`
    lines.push(
      `${entry.provider} ${entry.model}: ${entry.requests} requests in ${entry.sessions.length} sessions`,
      `  reads: ${entry.readsOn128} of ${entry.nonZeroReads} non-zero reads are multiples of 128; every one sits on a ${entry.granularity}-token grid`,
      `  sessions: hit ${percentText(Math.min(...ratios))}–${percentText(Math.max(...ratios))}; ${Math.min(...below)}–${Math.max(...below)} requests per session read below the previous request's prefix (${prefix})`,
    )
    if (entry.pairs !== undefined)
      lines.push(
        `  within 5 minutes on the same model: ${pairsText(entry.pairs)}${entry.mainPairs !== undefined && entry.mainPairs.total !== entry.pairs.total ? ` (main sessions: ${pairsText(entry.mainPairs)})` : ''}`,
      )
    if (entry.gridCandidates.length > 0)
      lines.push(
        `  simulator placement: ${Object.entries(entry.placements)
          .map(([placement, count]) => `${placement} ${count}`)
          .join(', ')}; exact by read grid: ${entry.gridCandidates
          .map(
            (candidate) => `${candidate.grid === 0 ? 'exact position' : candidate.grid} ${candidate.exact}`,
          )
          .join(', ')}`,
      )
    if (entry.tokenFit !== undefined)
      lines.push(
        `  tokens: recorded ≈ ${countText(entry.tokenFit.headTokens)} + ${entry.tokenFit.tokenScale} × simulated${entry.tokenFit.framingPerMessage !== undefined ? ` + ${entry.tokenFit.framingPerMessage} per message` : ''} (${entry.tokenFit.points} requests)`,
      )
    lines.push(
      `  TTL: ${entry.ttl.readAfter5m} of ${entry.ttl.after5m} pairs more than 5 minutes apart still read (${entry.ttl.readAfter1h} of ${entry.ttl.after1h} past 1 hour)${entry.writes.oneHour + entry.writes.fiveMinute > 0 ? `; writes ${countText(entry.writes.fiveMinute)} at 5m, ${countText(entry.writes.oneHour)} at 1h` : ''}`,
      `  agreement (${measured} predicted steps): ${entry.tally.exact} exact, ${entry.tally['within-unit']} within one unit, ${entry.tally.off} off; ${entry.tally.unmeasured} not predicted`,
    )
    const unexplained: CalibrationStep[] = []
    for (const step of entry.steps) {
      if (step.agreement !== 'off') continue
      unexplained.push(step)
      if (unexplained.length === LISTED_STEPS) break
    }
    for (const step of unexplained)
      lines.push(
        `    ${step.source.split('/').at(-1)}: read ${countText(step.recordedRead)}, predicted ${countText(step.predictedRead ?? 0)} — ${step.note}`,
      )
    if (entry.tally.off > LISTED_STEPS)
      lines.push(`    … ${entry.tally.off - LISTED_STEPS} more off steps in calibration.csv`)
    lines.push('')
  }
  // The pair rule over every model of a provider, main sessions apart (the figure a person quotes).
  const byProvider = new Map<string, ModelCalibration[]>()
  for (const entry of models)
    if (entry.pairs !== undefined)
      byProvider.set(entry.provider, [...(byProvider.get(entry.provider) ?? []), entry])
  for (const [provider, entries] of byProvider) {
    if (entries.length < 2) continue
    const all = addPairs(entries.flatMap((entry) => (entry.pairs === undefined ? [] : [entry.pairs])))
    const main = addPairs(
      entries.flatMap((entry) => (entry.mainPairs === undefined ? [] : [entry.mainPairs])),
    )
    lines.push(
      `${provider}, all ${entries.length} models, within 5 minutes on the same model: ${pairsText(all)}`,
      `  main sessions only (no sidechain or subagent): ${pairsText(main)}`,
      '',
    )
  }
  return lines
}

/** `233 of 248 pairs read exactly the previous read + write; 12 more, 3 less`. */
function pairsText(pairs: PairCounts): string {
  return `${pairs.exact} of ${pairs.total} pairs read exactly the previous read + write; ${pairs.more} more, ${pairs.less} less`
}
