// `cachelab list`: what can be run.

import { AGENT_DRIVERS, AGENT_NAMES } from '../harness/loops/agents/index.ts'
import { LOOP_DESCRIPTIONS, LOOP_NAMES } from '../harness/loops/types.ts'
import { catalogEntries, defaultModel, vendorOf } from '../providers/catalog.ts'
import { findCompatible, knownProviderIds } from '../providers/compatible.ts'
import { AGENT_SCENARIOS } from '../scenarios/agents/scripts.ts'
import type { Scenario } from '../scenarios/types.ts'
import { parse } from './args.ts'
import { LIST_FLAGS } from './commands.ts'
import { knownScenarios } from './scenarios-option.ts'

export async function listCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, LIST_FLAGS)
  const known = await knownScenarios(values.scenarios)
  const lines: string[] = []
  if (values.scenarios !== undefined) {
    lines.push('Your scenarios (--scenarios):')
    for (const { scenario, file } of known.user) lines.push(...scenarioLines(scenario, file))
    lines.push('', 'Built-in scenarios:')
  } else lines.push('Scenarios:')
  for (const scenario of known.builtIn) lines.push(...scenarioLines(scenario))
  lines.push('', 'Loops (--loop; default model):')
  for (const loop of LOOP_NAMES) lines.push(`  ${loop}: ${LOOP_DESCRIPTIONS[loop]}`)
  lines.push('', 'Coding agents (--agent NAME, NAME@VERSION or NAME@latest; pinned versions):')
  for (const name of AGENT_NAMES) {
    const driver = AGENT_DRIVERS[name]
    lines.push(
      `  ${name}: ${driver.package}@${driver.version} (\`${driver.bin}\`, default model ${driver.defaultModel})`,
    )
  }
  lines.push('', 'Agent scenarios (--agent … --scenario NAME):')
  for (const scenario of AGENT_SCENARIOS) lines.push(`  ${scenario.name}: ${scenario.description}`)
  lines.push('', 'Providers and models (* = default):')
  for (const provider of knownProviderIds()) {
    const vendor = vendorOf(provider)
    const models = catalogEntries()
      .filter((entry) => entry.vendor === vendor)
      .map((entry) => (entry.model === defaultModel(vendor) ? `${entry.model}*` : entry.model))
    const compatible = findCompatible(provider)
    const origin = compatible === undefined ? '' : ` (${compatible.name}; when named)`
    lines.push(`  ${provider}: ${models.join(', ')}${origin}`)
  }
  process.stdout.write(`${lines.join('\n')}\n`)
  return 0
}

function scenarioLines(scenario: Scenario, file?: string): string[] {
  const variants = `[${scenario.variants.map((variant) => variant.name).join(', ')}]`
  return [
    `  ${scenario.name}  ${variants}${file === undefined ? '' : `  (${file})`}`,
    `      ${scenario.demonstrates}`,
  ]
}
