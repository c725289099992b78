// `cachelab check --baseline DIR [--out DIR] [--tolerance PP]`: the baseline gate. Exit 0 when every
// baseline session holds, 1 with a table of the regressions, 2 on bad input.

import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import { checkBaseline, DEFAULT_TOLERANCE_POINTS, gateReport } from '../reports/gate.ts'
import { readStepsCsv, readSummaryCsv } from '../reports/load.ts'
import { parse } from './args.ts'

const LATEST_RUN = join('reports', 'out', 'latest')

export function checkCommand(argv: string[]): number {
  const { values } = parse(argv, {
    baseline: { type: 'string' },
    out: { type: 'string' },
    tolerance: { type: 'string' },
  })
  if (values.baseline === undefined)
    throw new CachelabError('usage', 'check needs --baseline DIR (a directory holding a summary.csv)')
  const tolerancePoints = toleranceOption(values.tolerance)
  const baselineDir = values.baseline
  const runDir = values.out ?? LATEST_RUN
  const baseline = readSummaryCsv(requireSummary(baselineDir, 'baseline'))
  if (baseline.length === 0)
    throw new CachelabError('input', `${join(baselineDir, 'summary.csv')} has no rows: nothing to check`)
  const run = readSummaryCsv(requireSummary(runDir, 'run'))
  const baselineStepsPath = join(baselineDir, 'steps.csv')
  const runStepsPath = join(runDir, 'steps.csv')
  const withSteps = existsSync(baselineStepsPath) && existsSync(runStepsPath)
  const result = checkBaseline({
    baseline,
    run,
    baselineSteps: withSteps ? readStepsCsv(baselineStepsPath) : undefined,
    runSteps: withSteps ? readStepsCsv(runStepsPath) : undefined,
    tolerancePoints,
  })
  process.stdout.write(`${gateReport(result)}\n`)
  return result.regressions.length === 0 ? 0 : 1
}

/** The directory's summary.csv path; a directory without one is an input error. */
function requireSummary(dir: string, what: 'baseline' | 'run'): string {
  const path = join(dir, 'summary.csv')
  if (existsSync(path)) return path
  const hint = what === 'run' ? ' (run cachelab run first, or name a run directory with --out DIR)' : ''
  throw new CachelabError('input', `${what} directory ${dir} has no summary.csv${hint}`)
}

function toleranceOption(value: string | undefined): number {
  if (value === undefined) return DEFAULT_TOLERANCE_POINTS
  const points = Number(value)
  if (value.trim() === '' || !Number.isFinite(points) || points < 0)
    throw new CachelabError(
      'usage',
      `--tolerance takes percentage points, a number >= 0 such as 0.5; got ${JSON.stringify(value)}`,
    )
  return points
}
