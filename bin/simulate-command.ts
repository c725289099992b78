// `cachelab simulate`: the cache simulator alone over a sequence of wire request bodies, one JSON line
// per request with the normalized and the provider-shaped usage. For what-if questions about requests.

import { readFileSync } from 'node:fs'
import { CachelabError } from '../harness/errors.ts'
import type { ProviderId } from '../harness/types.ts'
import { resolveModel } from '../providers/catalog.ts'
import { type SimulationInput, simulate } from '../providers/simulate.ts'
import { parse, providersOption } from './args.ts'

/**
 * Run the simulator over `text` (JSONL: one body, or `{"at", "body", "output", "headers"}`, per line); returns the
 * output lines. `source` names the input in errors, with the line.
 */
export function simulateLines(text: string, source: string, provider: ProviderId, model?: string): string[] {
  const inputs: SimulationInput[] = []
  const lineNumbers: number[] = []
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      throw new CachelabError('input', `${source}:${index + 1}: not valid JSON`)
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new CachelabError('input', `${source}:${index + 1}: a line must be a JSON object`)
    }
    const record = value as Record<string, unknown>
    const wrapped = typeof record.body === 'object' && record.body !== null
    inputs.push({
      body: (wrapped ? record.body : record) as Record<string, unknown>,
      ...(wrapped && record.at !== undefined ? { at: record.at as number } : {}),
      ...(wrapped && typeof record.output === 'string' ? { output: record.output } : {}),
      ...(wrapped && isStringRecord(record.headers) ? { headers: record.headers } : {}),
    })
    lineNumbers.push(index + 1)
  }
  const outputs = simulate(provider, inputs, {
    ...(model !== undefined ? { model } : {}),
    label: (index) => `${source}:${lineNumbers[index]}`,
  })
  return outputs.map((output) => JSON.stringify(output))
}

/** A JSON object of strings (a line's `headers`). */
function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((item) => typeof item === 'string')
  )
}

/** simulate's flags. */
export const SIMULATE_FLAGS = { provider: { type: 'string' }, model: { type: 'string' } } as const

export function simulateCommand(argv: string[], stdin: () => string = () => readFileSync(0, 'utf8')): number {
  const { values, positionals } = parse(argv, SIMULATE_FLAGS, true)
  if (values.provider === undefined) throw new CachelabError('usage', 'simulate needs --provider ID')
  const [provider] = providersOption(values.provider)
  if (provider === undefined || values.provider.includes(',') || values.provider === 'all') {
    throw new CachelabError('usage', 'simulate takes exactly one --provider')
  }
  if (positionals.length !== 1)
    throw new CachelabError('usage', 'simulate takes one FILE.jsonl (or - for stdin)')
  // A model the catalog lacks would be simulated by another's rules in silence: name the known ones.
  if (values.model !== undefined) resolveModel(provider, values.model)
  const file = positionals[0] as string
  let text: string
  try {
    text = file === '-' ? stdin() : readFileSync(file, 'utf8')
  } catch (error) {
    throw new CachelabError('input', `cannot read ${file}: ${(error as Error).message}`)
  }
  const lines = simulateLines(text, file === '-' ? 'stdin' : file, provider, values.model)
  process.stdout.write(lines.length === 0 ? '' : `${lines.join('\n')}\n`)
  return 0
}
