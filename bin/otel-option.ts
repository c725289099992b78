// The export flags every command that writes rows takes (`run`, `report`, `import`): `--otlp-file`,
// `--otlp-endpoint`, `--otel-names`, `--otel-epoch`, checked before any work is done, and the export
// after the command's own files are written, said in one line.

import { accessSync, constants, existsSync, statSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import { FIXED_EPOCH_MS } from '../reports/otel.ts'
import {
  exportRows,
  type OtelExportOptions,
  type OtelExportResult,
  tracesUrl,
} from '../reports/otel-export.ts'
import { OTEL_NAME_SETS, type OtelNameSet } from '../reports/otel-names.ts'
import type { StepRow } from '../reports/types.ts'

/** The flags (commands.ts), for the commands that spread them into their tables. */
export { OTEL_FLAGS } from './commands.ts'

/** The flags' values as `parse` returns them. */
export interface OtelFlagValues {
  'otlp-file'?: string | undefined
  'otlp-endpoint'?: string | undefined
  'otel-names'?: string | undefined
  'otel-epoch'?: string | undefined
}

/**
 * The export the flags ask for, or undefined when they name no sink. Checked before the command does its
 * work, so a typo does not cost a run: a bad name set, epoch or URL, a file path that cannot be written,
 * or `--otel-names` / `--otel-epoch` without a sink are usage errors. `defaultEpochMs` is the command's
 * own (a simulated run: `FIXED_EPOCH_MS`; a live run: its start; a capture: when recording began).
 */
export function otelExport(values: OtelFlagValues, defaultEpochMs: number): OtelExportOptions | undefined {
  const file = values['otlp-file']
  const endpoint = values['otlp-endpoint']
  if (file === undefined && endpoint === undefined) {
    for (const flag of ['otel-names', 'otel-epoch'] as const)
      if (values[flag] !== undefined)
        throw new CachelabError('usage', `--${flag} needs --otlp-file or --otlp-endpoint`)
    return undefined
  }
  const names = values['otel-names'] ?? 'genai'
  if (!(OTEL_NAME_SETS as readonly string[]).includes(names))
    throw new CachelabError(
      'usage',
      `--otel-names ${JSON.stringify(names)}: expected ${OTEL_NAME_SETS.join(', ')}`,
    )
  if (endpoint !== undefined) tracesUrl(endpoint)
  if (file !== undefined) requireWritable(file)
  return {
    ...(file !== undefined ? { file } : {}),
    ...(endpoint !== undefined ? { endpoint } : {}),
    names: names as OtelNameSet,
    epochMs: epochOption(values['otel-epoch'], defaultEpochMs),
  }
}

/**
 * Export the rows for a command, after its own files are written. An endpoint that did not take the
 * spans is one warning line on stderr and leaves the command's exit code alone (`exportLine` says it too).
 */
export async function exportForCommand(
  rows: readonly StepRow[],
  options: OtelExportOptions,
): Promise<OtelExportResult> {
  const result = await exportRows(rows, options)
  if (result.endpoint !== undefined && !result.endpoint.delivered)
    process.stderr.write(
      `cachelab: OTLP export to ${result.endpoint.url} failed (${result.endpoint.reason}); the other outputs are written\n`,
    )
  return result
}

/** One line: how many spans and traces went where. */
export function exportLine(result: OtelExportResult): string {
  const places: string[] = []
  if (result.file !== undefined) places.push(relative(process.cwd(), result.file) || result.file)
  if (result.endpoint !== undefined)
    places.push(result.endpoint.delivered ? result.endpoint.url : `not ${result.endpoint.url} (failed)`)
  const count = (amount: number, noun: string) => `${amount} ${noun}${amount === 1 ? '' : 's'}`
  return `otel: ${count(result.spans, 'span')} in ${count(result.traces, 'trace')} → ${places.join(', ')}`
}

/** `fixed` (2000-01-01), `now`, or an ISO 8601 time; absent: the command's default. */
function epochOption(value: string | undefined, defaultEpochMs: number): number {
  if (value === undefined) return defaultEpochMs
  if (value === 'fixed') return FIXED_EPOCH_MS
  if (value === 'now') return Date.now()
  const parsed = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN
  if (!Number.isFinite(parsed))
    throw new CachelabError(
      'usage',
      `--otel-epoch ${JSON.stringify(value)}: expected fixed, now or an ISO 8601 time (2026-11-30T09:00:00Z)`,
    )
  return parsed
}

/** The file must not be a directory, and its directory (or the nearest that exists, under which the export creates it) must be writable. */
function requireWritable(file: string): void {
  const path = resolve(file)
  if (existsSync(path) && statSync(path).isDirectory())
    throw new CachelabError('usage', `--otlp-file ${file} is a directory`)
  let parent = dirname(path)
  while (!existsSync(parent)) parent = dirname(parent)
  if (!statSync(parent).isDirectory())
    throw new CachelabError('usage', `--otlp-file ${file} cannot be written: ${parent} is not a directory`)
  try {
    accessSync(parent, constants.W_OK)
  } catch {
    throw new CachelabError('usage', `--otlp-file ${file} cannot be written: ${parent} is not writable`)
  }
}
