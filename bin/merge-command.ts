// `cachelab merge-reports DIR… [--out DIR] [--scenarios PATH]`: the folders `run --shard i/n` wrote, put
// together as the run's own folder (scenarios/merge.ts), which `check` then gates like any run.

import { join, relative, resolve } from 'node:path'
import { runStamp } from '../reports/run-folder.ts'
import { summaryTable, wantsColour } from '../reports/table.ts'
import { mergeShards, readShards } from '../scenarios/merge.ts'
import { parse } from './args.ts'
import { MERGE_FLAGS } from './commands.ts'
import { claimsSummary, linkLatest, OUT_ROOT } from './run-command.ts'
import { allScenarios, knownScenarios } from './scenarios-option.ts'

export async function mergeCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, MERGE_FLAGS, true)
  const shards = readShards(positionals)
  const known = allScenarios(await knownScenarios(values.scenarios))
  const outDir = resolve(values.out ?? join(OUT_ROOT, runStamp()))
  const merged = mergeShards(shards, outDir, known)
  if (values.out === undefined) linkLatest(outDir)
  const where = relative(process.cwd(), outDir) || '.'
  const lines =
    merged.kind === 'matrix'
      ? [
          summaryTable(merged.summaries, { colour: wantsColour(process.stdout, process.env) }),
          '',
          claimsSummary(merged.claims),
          '',
        ]
      : []
  lines.push(
    `run ${merged.runId}: ${merged.shards} shards merged, ${merged.requests} requests; wrote ${where} (${merged.kind === 'matrix' ? 'steps.csv, summary.csv, breaks.csv, claims.csv, plan.json, report.html, sessions/' : 'agents.csv, agent-steps.csv and the run files'})`,
  )
  process.stdout.write(`${lines.join('\n')}\n`)
  return 0
}
