// `cachelab import --policy consolidate|keep-live` at the command line: the flag's value checked, the files
// it adds, and the check that the inputs held a DSH log. What it computes and prints is import-policy.ts's,
// loaded only when the flag is given.

import { CachelabError } from '../harness/errors.ts'
import { SERIES_START_POLICIES, type SeriesStartPolicy } from '../harness/policies.ts'
import type { TranscriptFormat } from '../reports/observed/transcripts/types.ts'

/** The files `--policy` writes into the import's directory. */
export const POLICY_FILES = ['policy.csv', 'policy-steps.csv'] as const

/** The `--policy` value, checked; undefined without the flag. */
export function policyOption(
  value: string | undefined,
  format: TranscriptFormat | 'auto',
): SeriesStartPolicy | undefined {
  if (value === undefined) return undefined
  if (!SERIES_START_POLICIES.includes(value as SeriesStartPolicy))
    throw new CachelabError(
      'usage',
      `--policy must be one of ${SERIES_START_POLICIES.join(', ')}, not ${value}`,
    )
  if (format !== 'auto' && format !== 'dsh')
    throw new CachelabError('usage', `--policy re-derives DSH logs, not ${format} transcripts`)
  return value as SeriesStartPolicy
}

/** The import read no DSH log: `--policy` has nothing to re-derive. */
export function requireDshLog(formats: readonly TranscriptFormat[]): void {
  if (formats.includes('dsh')) return
  throw new CachelabError(
    'usage',
    `--policy re-derives DSH logs, and none is among the inputs (read: ${[...new Set(formats)].join(', ') || 'nothing'})`,
  )
}
