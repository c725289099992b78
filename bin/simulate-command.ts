// `cachelab simulate`: the cache simulator alone over a sequence of wire request bodies, one JSON line
// per request with the normalized and the provider-shaped usage. For what-if questions about requests.

import { readFileSync } from 'node:fs'
import { CachelabError } from '../harness/errors.ts'
import type { AssistantMessage } from '../harness/types.ts'
import { createAdapter, simulatedEndpoint } from '../providers/index.ts'
import { DEFAULT_REPLY } from '../providers/mock/script.ts'
import { wireUsage } from '../providers/mock/usage.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { SimulatorRejection } from '../providers/sim/types.ts'
import { parse, providersOption } from './args.ts'

/** Run the simulator over `text` (JSONL); returns the output lines. `source` names the input in errors. */
export function simulateLines(
  text: string,
  source: string,
  provider: Parameters<typeof simulatedEndpoint>[0],
  model?: string,
): string[] {
  const adapter = createAdapter(provider, simulatedEndpoint(provider))
  const simulators = new CacheSimulators()
  const out: string[] = []
  let at = 0
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
    const body = { ...((wrapped ? record.body : record) as Record<string, unknown>) }
    if (wrapped && record.at !== undefined) {
      if (typeof record.at !== 'number' || !Number.isFinite(record.at) || record.at < at) {
        throw new CachelabError(
          'input',
          `${source}:${index + 1}: "at" must be a number of seconds, not before the previous line`,
        )
      }
      at = record.at
    }
    if (body.model === undefined && model !== undefined) body.model = model
    if (typeof body.model !== 'string')
      throw new CachelabError('input', `${source}:${index + 1}: the body has no model (pass --model)`)
    const output: AssistantMessage =
      wrapped && typeof record.output === 'string'
        ? { role: 'assistant', content: [{ type: 'text', text: record.output }] }
        : DEFAULT_REPLY
    try {
      const simulation = simulators.simulate(adapter.api, { body, at, output })
      const raw = wireUsage(adapter.api, simulation.counts, simulators.openai.reportsWrites(body.model))
      const { raw: _kept, ...usage } = adapter.parseUsage(raw)
      out.push(JSON.stringify({ usage, raw }))
    } catch (error) {
      if (!(error instanceof SimulatorRejection)) throw error
      out.push(JSON.stringify({ error: { status: error.status, body: error.body } }))
    }
  }
  return out
}

export function simulateCommand(argv: string[], stdin: () => string = () => readFileSync(0, 'utf8')): number {
  const { values, positionals } = parse(
    argv,
    { provider: { type: 'string' }, model: { type: 'string' } },
    true,
  )
  if (values.provider === undefined) throw new CachelabError('usage', 'simulate needs --provider ID')
  const [provider] = providersOption(values.provider)
  if (provider === undefined || values.provider.includes(',') || values.provider === 'all') {
    throw new CachelabError('usage', 'simulate takes exactly one --provider')
  }
  if (positionals.length !== 1)
    throw new CachelabError('usage', 'simulate takes one FILE.jsonl (or - for stdin)')
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
