// `cachelab list`: what can be run.

import { PROVIDER_IDS } from '../harness/types.ts'
import { CATALOG, DEFAULT_MODELS, vendorOf } from '../providers/index.ts'
import { SCENARIOS } from '../scenarios/index.ts'
import { parse } from './args.ts'

export function listCommand(argv: string[]): number {
  parse(argv, {})
  const lines: string[] = ['Scenarios:']
  for (const scenario of SCENARIOS) {
    lines.push(`  ${scenario.name}  [${scenario.variants.map((variant) => variant.name).join(', ')}]`)
    lines.push(`      ${scenario.demonstrates}`)
  }
  lines.push('', 'Providers and models (* = default):')
  for (const provider of PROVIDER_IDS) {
    const vendor = vendorOf(provider)
    const models = CATALOG.filter((entry) => entry.vendor === vendor).map((entry) =>
      entry.model === DEFAULT_MODELS[vendor] ? `${entry.model}*` : entry.model,
    )
    lines.push(`  ${provider}: ${models.join(', ')}`)
  }
  process.stdout.write(`${lines.join('\n')}\n`)
  return 0
}
