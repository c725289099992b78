// `cachelab calibrate FILE|DIR... [--format auto|claude-code|codex|dsh|pi] [--out DIR] [--lenient]`:
// recorded usage from agents' own transcripts set against the simulators, per provider and model —
// calibration.csv (every step: recorded, predicted, agreement, why not), calibration-models.csv (the
// parameters the reads show) and a summary on the terminal. The work is in reports/calibrate*.ts.

import { closeSync, openSync, writeSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { stringify } from 'csv-stringify/sync'
import { CachelabError } from '../harness/errors.ts'
import type { ModelCalibration } from '../reports/calibrate.ts'
import { calibrateFiles } from '../reports/calibrate-files.ts'
import {
  calibrationText,
  MODEL_COLUMNS,
  modelRecords,
  STEP_COLUMNS,
  stepRecord,
} from '../reports/calibrate-output.ts'
import { TRANSCRIPT_FORMATS, type TranscriptFormat } from '../reports/observed/transcripts/types.ts'
import { RunFolder, runStamp } from '../reports/run-folder.ts'
import { standInRuleLines } from '../reports/stand-ins.ts'
import { parse } from './args.ts'
import { CALIBRATE_FLAGS } from './commands.ts'

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
  lines.push(...standInRuleLines(result.models))
  if (result.problems.length > 0) lines.push(`${result.problems.length} lines skipped (--lenient)`)
  lines.push(
    `calibrate: ${result.models.reduce((sum, entry) => sum + entry.requests, 0)} requests from ${result.files} files; wrote ${relative(process.cwd(), outDir) || '.'}/{${written.join(',')}}`,
  )
  process.stdout.write(`${lines.join('\n')}\n`)
  return 0
}
