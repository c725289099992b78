// `cachelab run`: scenarios × providers × variants on the simulator (or live), the summary printed,
// and steps.csv, summary.csv, report.html and every session's event log written under the output directory.

import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { config as loadDotenv } from 'dotenv'
import { VirtualClock } from '../harness/clock.ts'
import { CachelabError } from '../harness/errors.ts'
import { hashString } from '../harness/random.ts'
import { startMockProviders } from '../providers/index.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { stepsCsv, summaryCsv } from '../reports/csv.ts'
import { renderReport } from '../reports/html.ts'
import { summarize } from '../reports/summary.ts'
import { summaryTable } from '../reports/table.ts'
import type { StepRow } from '../reports/types.ts'
import { SCENARIOS } from '../scenarios/index.ts'
import { planMatrix, runSession, sessionIdOf } from '../scenarios/run.ts'
import { listOption, parse, providersOption } from './args.ts'

const OUT_ROOT = join('reports', 'out')

export async function runCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    scenario: { type: 'string' },
    provider: { type: 'string' },
    variant: { type: 'string' },
    model: { type: 'string' },
    live: { type: 'boolean' },
    stream: { type: 'boolean' },
    out: { type: 'string' },
    json: { type: 'boolean' },
  })
  const names = SCENARIOS.map((scenario) => scenario.name)
  const chosen = listOption(values.scenario, names, 'scenario')
  const scenarios =
    chosen === undefined ? [...SCENARIOS] : SCENARIOS.filter((scenario) => chosen.includes(scenario.name))
  const providers = providersOption(values.provider)
  const variantNames = [
    ...new Set(scenarios.flatMap((scenario) => scenario.variants.map((variant) => variant.name))),
  ]
  const variants = listOption(values.variant, variantNames, 'variant')
  const plans = planMatrix(scenarios, providers, variants)
  if (plans.length === 0)
    throw new CachelabError('usage', 'nothing to run: no scenario has those variants on those providers')
  const live = values.live === true
  const stream = values.stream ?? false
  const env: Record<string, string | undefined> = { ...process.env }
  if (live) loadDotenv({ processEnv: env as Record<string, string>, quiet: true })

  const outDir = resolve(values.out ?? join(OUT_ROOT, timestamp()))
  const sessionsDir = join(outDir, 'sessions')
  prepareOutput(outDir, sessionsDir)
  const runId = live
    ? `live-${timestamp()}`
    : `sim-${hashString(JSON.stringify([plans.map(sessionIdOf), values.model ?? '', stream]))
        .toString(16)
        .padStart(8, '0')}`

  const showProgress = process.stderr.isTTY === true && process.env.CI === undefined && values.json !== true
  const mock = live ? undefined : startMockProviders()
  // Live sessions share one predictor and one clock, as they share the provider's cache and time.
  const predictor = new CacheSimulators()
  const liveClock = new VirtualClock()
  const rows: StepRow[] = []
  try {
    for (const [index, plan] of plans.entries()) {
      const result = await runSession(plan, {
        runId,
        stream,
        sessionsDir,
        env,
        ...(values.model !== undefined ? { model: values.model } : {}),
        ...(mock !== undefined ? { mock } : { predictor, clock: liveClock }),
      })
      rows.push(...result.rows)
      if (showProgress) {
        const [summary] = summarize(result.rows)
        const hit = summary?.hitRatioWarm === undefined ? '-' : `${(summary.hitRatioWarm * 100).toFixed(1)}%`
        process.stderr.write(`[${index + 1}/${plans.length}] ${sessionIdOf(plan)}  hit (warm) ${hit}\n`)
      }
    }
  } finally {
    mock?.close()
  }
  const summaries = summarize(rows)
  writeFileSync(join(outDir, 'steps.csv'), stepsCsv(rows))
  writeFileSync(join(outDir, 'summary.csv'), summaryCsv(summaries))
  writeFileSync(join(outDir, 'report.html'), renderReport({ rows, summaries, runId }))
  if (values.out === undefined) linkLatest(outDir)
  if (values.json === true) {
    process.stdout.write(`${JSON.stringify({ runId, outDir, summary: summaries }, null, 2)}\n`)
  } else {
    process.stdout.write(
      `${summaryTable(summaries)}\n\nrun ${runId}: ${rows.length} requests; wrote ${relative(process.cwd(), outDir) || '.'}/{steps.csv,summary.csv,report.html,sessions/}\n`,
    )
  }
  return 0
}

/** Make the output directory; a previous run's session logs there are replaced. */
function prepareOutput(outDir: string, sessionsDir: string): void {
  mkdirSync(outDir, { recursive: true })
  if (existsSync(sessionsDir)) {
    for (const name of readdirSync(sessionsDir)) {
      if (name.endsWith('.jsonl') || name.endsWith('.torn')) rmSync(join(sessionsDir, name))
    }
  }
  mkdirSync(sessionsDir, { recursive: true })
}

function linkLatest(outDir: string): void {
  const latest = resolve(OUT_ROOT, 'latest')
  try {
    unlinkSync(latest)
  } catch {
    // no previous link
  }
  symlinkSync(relative(resolve(OUT_ROOT), outDir), latest)
}

function timestamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
}
