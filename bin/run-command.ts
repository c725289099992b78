// `cachelab run`: the flags made into a run of scenarios × providers × variants (scenarios/matrix.ts) on the
// simulator or live, its files written under the output directory and its summary printed.

import { hostname } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { config as loadDotenv } from 'dotenv'
import { LOOP_NAMES } from '../harness/loops/types.ts'
import { breaksOf } from '../reports/breaks.ts'
import { diagnosisSummary, disagreementLine, tallyDiagnoses } from '../reports/diagnosis.ts'
import { librarySummaryLines } from '../reports/libraries.ts'
import { loopsSummaryLines } from '../reports/loops.ts'
import { FIXED_EPOCH_MS } from '../reports/otel.ts'
import { replaceSymlink, runStamp } from '../reports/run-folder.ts'
import { breaksDigest, summaryTable, wantsColour } from '../reports/table.ts'
import type { ClaimResult } from '../reports/types.ts'
import { notApplicableLine, run } from '../scenarios/matrix.ts'
import { requireJobs } from '../scenarios/session-jobs.ts'
import { parseShard, type ShardOptions, sharedRunIdOf, whereOf } from '../scenarios/shards.ts'
import { agentsCommand } from './agents-command.ts'
import { listOption, parse, providersOption } from './args.ts'
import { RUN_FLAGS } from './commands.ts'
import { exportForCommand, exportLine, otelExport } from './otel-option.ts'
import { PROGRESS_INTERVAL_MS, ProgressReporter } from './run-progress.ts'
import { allScenarios, chosenScenarios, knownScenarios } from './scenarios-option.ts'

/** Where a run's folder goes when `--out` does not say. */
export const OUT_ROOT = join('reports', 'out')

export async function runCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, RUN_FLAGS)
  const shard = values.shard === undefined ? undefined : shardOptions(values.shard, process.env)
  if (values.agent !== undefined)
    return agentsCommand({
      agent: values.agent,
      scenario: values.scenario,
      out: values.out,
      json: values.json,
      ...(shard !== undefined ? { shard } : {}),
    })
  const known = await knownScenarios(values.scenarios)
  const scenarios = chosenScenarios(known, values.scenario)
  // A dimension no flag narrowed is recorded as `all` in the run's plan.json: the gate then holds the run
  // to every baseline session of it, a scenario the run no longer knows included.
  const everyScenario = scenarios.length === allScenarios(known).length
  const variantNames = [
    ...new Set(scenarios.flatMap((scenario) => scenario.variants.map((variant) => variant.name))),
  ]
  const variants = listOption(values.variant, variantNames, 'variant')
  const live = values.live === true
  // A simulated run's spans sit at the fixed epoch (the same bytes every run); a live run's at its start.
  const otel = otelExport(values, live ? Date.now() : FIXED_EPOCH_MS)
  const env: Record<string, string | undefined> = { ...process.env }
  if (live) loadDotenv({ processEnv: env as Record<string, string>, quiet: true })
  const outDir = resolve(values.out ?? join(OUT_ROOT, runStamp()))
  const jobs = values.jobs === undefined ? undefined : requireJobs(Number(values.jobs), values.jobs)
  const progress = new ProgressReporter(
    process.stderr.isTTY === true && process.env.CI === undefined
      ? // A pseudo-terminal without a size reports 0 columns.
        { kind: 'live', columns: process.stderr.columns || 80 }
      : { kind: 'lines', intervalMs: PROGRESS_INTERVAL_MS },
    { write: (text) => process.stderr.write(text), now: () => performance.now() },
  )
  const loops = listOption(values.loop, LOOP_NAMES, 'loop') ?? ['model']
  const { runId, rows, summaries, claims, notApplicable, failures, inexpressible, comparisons, libraries } =
    await run({
      loops,
      ...(everyScenario && known.user.length === 0 ? {} : { scenarios }),
      ...(values.provider === undefined || values.provider === 'all'
        ? {}
        : { providers: providersOption(values.provider) }),
      ...(variants !== undefined ? { variants } : {}),
      ...(values.model !== undefined ? { model: values.model } : {}),
      live,
      env,
      stream: values.stream ?? false,
      out: outDir,
      ...(jobs !== undefined ? { jobs } : {}),
      ...(shard !== undefined ? { shard } : {}),
      onProgress: (state) => progress.update(state),
    }).finally(() => progress.finish())
  // An absent library is skipped, never fatal while another loop ran: what to install goes to stderr.
  for (const library of libraries.absent)
    process.stderr.write(
      `cachelab: --loop ${library.name} skipped: ${library.reason}; install: ${library.install}\n`,
    )
  // A shard is not a run `check` can read: `latest` keeps pointing at the last whole one.
  if (values.out === undefined && shard === undefined) linkLatest(outDir)
  const exported = otel === undefined ? undefined : await exportForCommand(rows, otel)
  const diagnoses = tallyDiagnoses(rows)
  if (values.json === true) {
    const report = {
      runId,
      outDir,
      // A shard's numbers are its cells' alone: the run's come from merge-reports.
      ...(shard !== undefined ? { shard: values.shard } : {}),
      summary: summaries,
      claims,
      notApplicable,
      failures,
      ...(loops.some((loop) => loop !== 'model') ? { inexpressible } : {}),
      ...(loops.includes('dsh') ? { loops: comparisons } : {}),
      ...(libraries.comparisons.length > 0 || libraries.absent.length > 0
        ? {
            libraries: {
              absent: libraries.absent,
              comparisons: libraries.comparisons.map(({ steps: _, ...entry }) => entry),
            },
          }
        : {}),
      ...(exported !== undefined ? { otel: exported } : {}),
      ...(diagnoses.diagnosed > 0
        ? {
            diagnostics: {
              diagnosed: diagnoses.diagnosed,
              agree: diagnoses.agree,
              disagree: diagnoses.disagreements.length,
              comparedNothing: diagnoses.noComparison,
              disagreements: diagnoses.disagreements.map(disagreementLine),
            },
          }
        : {}),
    }
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
  } else {
    const succeeded = rows.filter((row) => row.ok).length
    const colour = wantsColour(process.stdout, process.env)
    const lines = [summaryTable(summaries, { colour }), '']
    const digest = breaksDigest(breaksOf(rows), { colour })
    if (digest !== '') lines.push(digest, '')
    const diagnosed = diagnosisSummary(rows)
    if (diagnosed.length > 0) lines.push(...diagnosed, '')
    if (notApplicable.length > 0) {
      lines.push(
        `not applicable (no rows, no numbers):`,
        ...notApplicable.map((entry) => `  ${notApplicableLine(entry)}`),
        '',
      )
    }
    if (inexpressible.length > 0) {
      lines.push(
        'not expressible on the loop (n/a, never faked):',
        ...inexpressible.map(
          (entry) =>
            `  ${entry.sessionId} (${entry.loop} loop): ${entry.action}${entry.turn > 0 ? ` after turn ${entry.turn}` : ''}: ${entry.reason}`,
        ),
        '',
      )
    }
    if (comparisons.length > 0)
      lines.push(
        'model loop beside DSH loop (loops.csv):',
        ...loopsSummaryLines(comparisons).map((line) => `  ${line}`),
        '',
      )
    const librarySummary = librarySummaryLines(libraries)
    if (librarySummary.length > 0)
      lines.push('client libraries side by side (libraries.csv, library-steps.csv):', ...librarySummary, '')
    if (shard !== undefined)
      lines.push(
        `shard ${values.shard} of run ${runId}: ${succeeded} requests, ${rows.length - succeeded} failed attempts; wrote ${relative(process.cwd(), outDir) || '.'}/{shard.json,sessions/}`,
        'claims, summary and report come from the whole run: cachelab merge-reports SHARD_DIR… --out DIR',
      )
    else lines.push(claimsSummary(claims), '')
    if (shard === undefined)
      lines.push(
        `run ${runId}: ${succeeded} requests, ${rows.length - succeeded} failed attempts; wrote ${relative(process.cwd(), outDir) || '.'}/{steps.csv,summary.csv,breaks.csv,claims.csv,${comparisons.length > 0 ? 'loops.csv,' : ''}${libraries.comparisons.length > 0 ? 'libraries.csv,library-steps.csv,' : ''}report.html,sessions/}`,
      )
    if (exported !== undefined) lines.push(exportLine(exported))
    process.stdout.write(`${lines.join('\n')}\n`)
  }
  // The outputs are written either way; a provider that did not answer fails the run.
  for (const line of failures) process.stderr.write(`${line}\n`)
  return failures.length > 0 ? 1 : 0
}

/** `--shard i/n` with where this machine is and the run id the shards share, if the environment has one. */
export function shardOptions(value: string, env: NodeJS.ProcessEnv): ShardOptions {
  return { ...parseShard(value), where: whereOf(hostname(), env), sharedId: sharedRunIdOf(env) }
}

/** The claims in a few lines: how many hold, each failure with what it observed. */
export function claimsSummary(claims: readonly ClaimResult[]): string {
  const count = (status: ClaimResult['status']) => claims.filter((claim) => claim.status === status).length
  const failed = claims.filter((claim) => claim.status === 'fails')
  const notRun = count('not-run')
  const head = `claims: ${count('holds')} of ${claims.length - notRun} hold${notRun > 0 ? ` (${notRun} not run: a variant they read was not in this run)` : ''}`
  return [
    head,
    ...failed.map(
      (claim) => `  FAILS ${claim.scenario} on ${claim.provider}: ${claim.text} Observed: ${claim.observed}`,
    ),
  ].join('\n')
}

/** Point `reports/out/latest` at the finished run; a `latest` that is not a link is left alone, with a warning. */
export function linkLatest(outDir: string): void {
  const latest = resolve(OUT_ROOT, 'latest')
  if (!replaceSymlink(latest, relative(resolve(OUT_ROOT), outDir)))
    process.stderr.write(`cachelab: ${latest} is not a link cachelab made; left as it is\n`)
}
