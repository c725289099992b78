// Recorded usage beside the simulator's prediction, for `cachelab calibrate`: a keyed run's steps.csv
// (`cachelab run --live`: `predicted_cache_read_tokens` beside the provider's usage) and a
// `serve --upstream live --record` capture (each exchange's usage and the simulator's predicted counts).
// Each becomes observed requests and, per request, the read the simulator predicted when it was sent.

import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import type { ProviderId, Usage } from '../harness/types.ts'
import { knownProviderIds } from '../providers/compatible.ts'
import { openCapture } from './observed/capture/store.ts'
import type { ObservedRequest } from './observed/transcripts/types.ts'
import { parseCsv } from './parse.ts'

/** Observed requests and, per request, the simulator's prediction made when it was sent. */
export interface RecordedUsage {
  requests: ObservedRequest[]
  predictions: Array<number | undefined>
}

/** What a calibrate argument is: a transcript path, a keyed run's steps.csv, or a capture. */
export type CalibrationSource =
  | { kind: 'transcripts'; path: string }
  | { kind: 'keyed-run'; file: string }
  | { kind: 'capture'; dir: string }

/** Tell a path's kind: a capture folder, a run folder or steps.csv, else transcripts (a file or a folder of them). */
export function sourceOf(path: string): CalibrationSource {
  if (existsSync(join(path, 'capture.json'))) return { kind: 'capture', dir: path }
  if (existsSync(join(path, 'steps.csv')) && statSync(path).isDirectory())
    return { kind: 'keyed-run', file: join(path, 'steps.csv') }
  if (path.endsWith('.csv')) return { kind: 'keyed-run', file: path }
  return { kind: 'transcripts', path }
}

/** Virtual or capture seconds as a time (the calibration reads only the gaps between requests). */
const timeOf = (seconds: number) => new Date(Date.UTC(2026, 0, 1) + seconds * 1000).toISOString()

/**
 * A keyed run's steps.csv: every answered row with a prediction (a simulated run has none, its usage is
 * the simulator's own, and is refused). Sessions are the run's (scenario, variant, provider, loop).
 */
export function keyedRunUsage(file: string): RecordedUsage {
  const rows = parseCsv(readFileSync(file, 'utf8'))
  const recorded: RecordedUsage = { requests: [], predictions: [] }
  const known: readonly string[] = knownProviderIds()
  for (const [index, row] of rows.entries()) {
    const provider = row.provider as ProviderId
    const input = Number(row.input_tokens)
    if (row.predicted_cache_read_tokens === undefined || row.predicted_cache_read_tokens === '') continue
    if (!known.includes(provider) || !(input > 0)) continue
    const read = Number(row.cache_read_tokens)
    const write = Number(row.cache_write_tokens)
    recorded.requests.push({
      format: 'keyed-run',
      source: `${file}:${index + 2}`,
      session: [row.scenario, row.variant, row.provider, row.loop].filter(Boolean).join('.'),
      provider,
      model: row.model ?? '',
      time: timeOf(Number(row.virtual_time_s)),
      usage: {
        input,
        uncached: Number(row.uncached_tokens),
        cacheRead: read,
        cacheWrite: write,
        output: Number(row.output_tokens),
        raw: null,
      },
      events: [],
      turn: Number(row.turn),
      step: Number(row.step),
    })
    recorded.predictions.push(Number(row.predicted_cache_read_tokens))
  }
  if (recorded.requests.length === 0)
    throw new CachelabError(
      'input',
      `${file}: no row carries a prediction beside the provider's usage: calibrate reads keyed runs (cachelab run --live), whose usage is the provider's; a simulated run's usage is the simulator's own`,
    )
  return recorded
}

/** A live capture: every answered exchange with the simulator's prediction beside the provider's usage. */
export function captureUsage(dir: string): RecordedUsage {
  const capture = openCapture(dir)
  if (capture.manifest.upstream !== 'live')
    throw new CachelabError(
      'input',
      `${dir}: a capture of the simulator (serve --upstream sim): its usage is the simulator's own; calibrate reads live captures (serve --upstream live --record)`,
    )
  const recorded: RecordedUsage = { requests: [], predictions: [] }
  for (const session of capture.sessions)
    for (const exchange of capture.read(session)) {
      const usage: Usage | undefined = exchange.usage
      if (usage === undefined || exchange.status < 200 || exchange.status >= 300) continue
      recorded.requests.push({
        format: 'capture',
        source: `${join(dir, 'sessions', `${session}.jsonl`)}#${exchange.seq}`,
        session: exchange.conversation,
        provider: exchange.provider,
        model: exchange.model,
        time: exchange.time,
        usage,
        events: [],
        turn: exchange.turn,
        step: exchange.step,
      })
      const simulation = exchange.simulation
      recorded.predictions.push(simulation?.predicted === true ? simulation.counts.read : undefined)
    }
  return recorded
}
