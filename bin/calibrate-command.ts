// `cachelab calibrate FILE|DIR... [--format auto|claude-code|codex|dsh|pi] [--out DIR] [--lenient]`:
// recorded usage from agents' own transcripts set against the simulators, per provider and model —
// calibration.csv (every step: recorded, predicted, agreement, why not), calibration-models.csv (the
// parameters the reads show) and a summary on the terminal. The core is reports/calibrate.ts.

import { closeSync, openSync, writeSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { stringify } from 'csv-stringify/sync'
import { CachelabError } from '../harness/errors.ts'
import type { ProviderId } from '../harness/types.ts'
import { type ModelEntry, simulationModel, vendorOf } from '../providers/catalog.ts'
import { detectFormat, READERS } from '../providers/transcripts/index.ts'
import { type ReplayedRequest, replayObserved } from '../providers/transcripts/replay.ts'
import {
  type ObservedRequest,
  TRANSCRIPT_FORMATS,
  type TranscriptFormat,
  type TranscriptProblem,
} from '../providers/transcripts/types.ts'
import {
  addPairs,
  type CalibrationInput,
  type CalibrationStep,
  calibrate,
  type ModelCalibration,
  type PairCounts,
} from '../reports/calibrate.ts'
import { CalibrationRequests } from '../reports/calibrate-requests.ts'
import { countText, percentText } from '../reports/text-table.ts'
import { parse } from './args.ts'
import { captureUsage, keyedRunUsage, sourceOf } from './calibrate-sources.ts'
import { transcriptFiles } from './import.ts'
import { RunFolder, runStamp } from './run-folder.ts'

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
function stepRecord(step: CalibrationStep): string[] {
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

/** calibration.csv lines are written in batches of this many steps. */
const STEPS_BATCH = 1_000

/** calibration.csv into the open folder, a batch of steps at a time (the same bytes as one stringify). */
function writeSteps(folder: RunFolder, models: readonly ModelCalibration[]): void {
  const file = openSync(folder.path('calibration.csv'), 'w')
  try {
    writeSync(file, stringify([[...STEP_COLUMNS]]))
    let batch: string[][] = []
    for (const entry of models)
      for (const step of entry.steps) {
        batch.push(stepRecord(step))
        if (batch.length === STEPS_BATCH) {
          writeSync(file, stringify(batch))
          batch = []
        }
      }
    if (batch.length > 0) writeSync(file, stringify(batch))
  } finally {
    closeSync(file)
  }
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

/** The read grid a simulator-based prediction uses: the catalog's for the model. */
function catalogGrid(provider: ProviderId, model: string): number | undefined {
  const rules = simulationModel(vendorOf(provider), model).cache
  switch (rules.kind) {
    case 'deepseek':
      return rules.readGranularityTokens
    case 'openai-prefix':
      return rules.increment
    default:
      return undefined
  }
}

/** Whether a request is replayed for its placements: a DeepSeek request that carries its body. */
function placed(request: ObservedRequest): boolean {
  return request.provider === 'deepseek' && request.request !== undefined
}

/**
 * A file's DeepSeek requests replayed with exact unit positions (the documented mode), so each read is
 * placed on one of the predecessor's units; the grid is applied to the recorded position afterwards.
 */
function replayPlacements(deepseek: readonly ObservedRequest[]): ReplayedRequest[] {
  if (deepseek.length === 0) return []
  const models: ModelEntry[] = [...new Set(deepseek.map((request) => request.model))].map((model) => {
    const entry = simulationModel('deepseek', model)
    return { ...entry, cache: { ...entry.cache, readGranularityTokens: 0 } } as ModelEntry
  })
  return replayObserved(deepseek, { models })
}

/**
 * Read every source (one file at a time) and calibrate: transcripts (replayed through the simulators
 * where they hold the request), keyed runs' steps.csv and live captures (the prediction made when the
 * request was sent).
 */
export async function calibrateFiles(
  paths: readonly string[],
  options: { format: TranscriptFormat | 'auto'; lenient: boolean },
): Promise<{ models: ModelCalibration[]; files: number; problems: TranscriptProblem[] }> {
  const sources = paths.map(sourceOf)
  const transcriptPaths = sources.flatMap((source) => (source.kind === 'transcripts' ? [source.path] : []))
  const files = transcriptPaths.length === 0 ? [] : transcriptFiles(transcriptPaths)
  if (files.length === 0 && sources.every((source) => source.kind === 'transcripts'))
    throw new CachelabError('input', `no transcript files under ${paths.join(', ')}`)
  const problems: TranscriptProblem[] = []
  const requests = new CalibrationRequests()
  for (const file of files) {
    const format = options.format === 'auto' ? await detectFormat(file) : options.format
    if (format === undefined)
      throw new CachelabError(
        'input',
        `${file}: not a transcript cachelab reads (claude-code, codex, dsh, pi); name one with --format`,
      )
    // Each request is packed as it is read (labels, time, buckets), but for the DeepSeek requests the
    // simulator replays after the file for their placements; their replay is set in afterwards.
    const deepseek: Array<{ request: ObservedRequest; index: number }> = []
    for await (const request of READERS[format](file, {
      lenient: options.lenient,
      onProblem: (problem) => problems.push(problem),
    })) {
      const index = requests.add(request)
      if (placed(request)) deepseek.push({ request, index })
    }
    const replayed = replayPlacements(deepseek.map((entry) => entry.request))
    for (const [position, { index }] of deepseek.entries()) requests.setReplay(index, replayed[position])
  }
  for (const source of sources) {
    if (source.kind === 'transcripts') continue
    const recorded = source.kind === 'capture' ? captureUsage(source.dir) : keyedRunUsage(source.file)
    for (const [index, request] of recorded.requests.entries())
      requests.add(request, { prediction: recorded.predictions[index] })
  }
  const models = calibrate({ requests, catalogGrid } satisfies CalibrationInput)
  return {
    models,
    files: files.length + sources.filter((source) => source.kind !== 'transcripts').length,
    problems,
  }
}

/** calibrate's flags. */
export const CALIBRATE_FLAGS = {
  format: { type: 'string' },
  out: { type: 'string' },
  lenient: { type: 'boolean' },
} as const

export async function calibrateCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, CALIBRATE_FLAGS, true)
  if (positionals.length === 0)
    throw new CachelabError(
      'usage',
      'calibrate needs at least one transcript, keyed run or live capture (a file or a directory): cachelab calibrate FILE|DIR...',
    )
  const format = values.format ?? 'auto'
  if (format !== 'auto' && !TRANSCRIPT_FORMATS.includes(format as TranscriptFormat))
    throw new CachelabError('usage', `--format must be auto, ${TRANSCRIPT_FORMATS.join(', ')}, not ${format}`)
  const result = await calibrateFiles(positionals, {
    format: format as TranscriptFormat | 'auto',
    lenient: values.lenient === true,
  })
  const outDir = resolve(values.out ?? join('reports', 'out', `calibrate-${runStamp()}`))
  const written = ['calibration.csv', 'calibration-models.csv']
  const folder = RunFolder.replace(outDir, { writer: 'calibrate', files: written })
  try {
    writeSteps(folder, result.models)
    folder.write('calibration-models.csv', stringify([[...MODEL_COLUMNS], ...modelRecords(result.models)]))
    folder.complete()
  } catch (error) {
    folder.abandon()
    throw error
  }
  const lines = calibrationText(result.models)
  if (result.problems.length > 0) lines.push(`${result.problems.length} lines skipped (--lenient)`)
  lines.push(
    `calibrate: ${result.models.reduce((sum, entry) => sum + entry.requests, 0)} requests from ${result.files} files; wrote ${relative(process.cwd(), outDir) || '.'}/{${written.join(',')}}`,
  )
  process.stdout.write(`${lines.join('\n')}\n`)
  return 0
}
