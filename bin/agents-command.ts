// `cachelab run --agent NAME[@VERSION],… [--scenario NAME,…] [--out DIR]`: the agents side by side
// (scenarios/agents/run.ts), its terminal block printed. The run lives in scenarios/; this parses and prints.

import { join, relative, resolve } from 'node:path'
import { runStamp } from '../reports/run-folder.ts'
import { chosenAgentScenarios, parseAgentSpecs, runAgents } from '../scenarios/agents/run.ts'
import type { ShardOptions } from '../scenarios/shards.ts'

/** Run the agents `--agent` names; exit 0 when every session ran (n/a counts as ran), 1 otherwise. */
export async function agentsCommand(values: {
  agent: string
  scenario?: string | undefined
  out?: string | undefined
  json?: boolean | undefined
  shard?: ShardOptions
}): Promise<number> {
  const agents = parseAgentSpecs(values.agent)
  const scenarios = chosenAgentScenarios(values.scenario)
  const out = resolve(values.out ?? join('reports', 'out', `agents-${runStamp()}`))
  const result = await runAgents({
    agents,
    scenarios,
    out,
    ...(values.shard !== undefined ? { shard: values.shard } : {}),
    onProgress: (line) => process.stderr.write(`cachelab: ${line}\n`),
  })
  if (values.json === true)
    process.stdout.write(
      `${JSON.stringify({ runId: result.runId, outDir: result.outDir, agents: result.agents }, null, 2)}\n`,
    )
  else
    process.stdout.write(
      `${[
        'coding agents side by side (agents.csv, agent-steps.csv):',
        ...result.lines,
        "warm hit: cache read / input tokens of requests after their conversation's first; lost: tokens",
        'the ideal would have read (client and provider side) and $; side: other conversations and $;',
        'vs best $: cost minus the cheapest agent on the scenario (each on its own default model)',
        '',
        values.shard === undefined
          ? `run ${result.runId}: agents.csv, agent-steps.csv and the run files in`
          : `shard ${values.shard.index}/${values.shard.count} of run ${result.runId} (merge the shards with cachelab merge-reports): shard.json in`,
        `  ${relative(process.cwd(), result.outDir) || '.'}`,
      ].join('\n')}\n`,
    )
  return result.agents.some((row) => row.status === 'failed') ? 1 : 0
}
