// `cachelab simulate`: the cache simulator alone over a sequence of wire request bodies, one JSON line
// per request with the normalized and the provider-shaped usage. For what-if questions about requests.

import { once } from 'node:events'
import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { CachelabError, unreadableFile } from '../harness/errors.ts'
import type { ProviderId } from '../harness/types.ts'
import { resolveModel } from '../providers/catalog.ts'
import { type SimulationInput, simulationStepper } from '../providers/simulate.ts'
import { parse, providersOption } from './args.ts'
import { SIMULATE_FLAGS } from './commands.ts'

/** One input line as a request to simulate; undefined for a blank line. `where` names it in errors. */
function inputOf(line: string, where: string): SimulationInput | undefined {
  if (line.trim() === '') return undefined
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    throw new CachelabError('input', `${where}: not valid JSON`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CachelabError('input', `${where}: a line must be a JSON object`)
  }
  const record = value as Record<string, unknown>
  const wrapped = typeof record.body === 'object' && record.body !== null
  return {
    body: (wrapped ? record.body : record) as Record<string, unknown>,
    ...(wrapped && record.at !== undefined ? { at: record.at as number } : {}),
    ...(wrapped && typeof record.output === 'string' ? { output: record.output } : {}),
    ...(wrapped && isStringRecord(record.headers) ? { headers: record.headers } : {}),
  }
}

/**
 * Simulate each line of `lines` (JSONL: one body, or `{"at", "body", "output", "headers"}`, per line) as it
 * comes, handing each output line to `write` before the next line is read: only the simulator's cache
 * state is held, never the input. `source` names the input in errors, with the line.
 */
export async function simulateStream(
  lines: AsyncIterable<string> | Iterable<string>,
  source: string,
  provider: ProviderId,
  write: (line: string) => void | Promise<void>,
  model?: string,
): Promise<number> {
  let lineNumber = 0
  let count = 0
  const step = simulationStepper(provider, {
    ...(model !== undefined ? { model } : {}),
    label: () => `${source}:${lineNumber}`,
  })
  for await (const line of lines) {
    lineNumber += 1
    const input = inputOf(line, `${source}:${lineNumber}`)
    if (input === undefined) continue
    await write(JSON.stringify(step(input, count)))
    count += 1
  }
  return count
}

/** Run the simulator over `text` (JSONL, as `simulateStream` reads it); returns the output lines. */
export function simulateLines(text: string, source: string, provider: ProviderId, model?: string): string[] {
  const step = simulationStepper(provider, {
    ...(model !== undefined ? { model } : {}),
    label: (index) => `${source}:${lineNumbers[index]}`,
  })
  const lineNumbers: number[] = []
  const outputs: string[] = []
  for (const [index, line] of text.split('\n').entries()) {
    const input = inputOf(line, `${source}:${index + 1}`)
    if (input === undefined) continue
    lineNumbers.push(index + 1)
    outputs.push(JSON.stringify(step(input, outputs.length)))
  }
  return outputs
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

/** What a missing input asks of the user. */
const SIMULATE_INPUT = 'check the path, or pipe the request bodies in with - (one JSON body a line)'

export async function simulateCommand(
  argv: string[],
  stdin: () => Readable = () => process.stdin,
): Promise<number> {
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
  const input = file === '-' ? stdin() : createReadStream(file)
  // A file that cannot be opened fails before the first line, as an input error.
  let failure: Error | undefined
  input.once('error', (error: Error) => {
    failure = error
  })
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })
  input.once('error', () => lines.close())
  // One output line per input line as it is simulated; a full stdout pauses the reading.
  const write = async (line: string) => {
    if (!process.stdout.write(`${line}\n`)) await once(process.stdout, 'drain')
  }
  try {
    await simulateStream(lines, file === '-' ? 'stdin' : file, provider, write, values.model)
  } catch (error) {
    if (error instanceof CachelabError) throw error
    throw unreadableFile(file, failure ?? error, SIMULATE_INPUT)
  } finally {
    lines.close()
  }
  if (failure !== undefined) throw unreadableFile(file, failure, SIMULATE_INPUT)
  return 0
}
