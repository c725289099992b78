// Reading logs written by earlier cachelab versions: a format-1 line is rewritten to format 2's names
// before it is validated, so every reader past the store sees one vocabulary. Pure and idempotent: a
// format-2 line passes through unchanged, so a format-1 log resumed (and appended to) by this version
// still reads.

import { isRecord } from './json-fields.ts'

/** A parsed log line with format 1's field names replaced by format 2's. */
export function upgradeLogLine(value: unknown): unknown {
  if (!isRecord(value) || !isRecord(value.data)) return value
  const data = value.data
  switch (value.type) {
    case 'request/header': {
      const header = data.header
      if (!isRecord(header) || !('sessionPrefix' in header)) return value
      const { sessionPrefix, ...rest } = header
      return { ...value, data: { ...data, header: { ...rest, messagePrefix: sessionPrefix } } }
    }
    case 'request/context': {
      if (!('route' in data)) return value
      // Format 1 logged `route: 'in-history' | 'unsupported'`; DSH logs only the capability, absent when missing.
      const { route, ...rest } = data
      return { ...value, data: route === 'in-history' ? { ...rest, systemPromptUpdate: route } : rest }
    }
    case 'compaction/summary': {
      // Format 1 recorded only the shadowed seqs; the range is their ends. The token count is unknown.
      if ('shadowedRange' in data || !Array.isArray(data.shadowedSeqs)) return value
      const seqs = data.shadowedSeqs
      return { ...value, data: { ...data, shadowedRange: { start: seqs[0], end: seqs.at(-1) } } }
    }
    case 'compaction/prune': {
      if (!('targetSeq' in data)) return value
      const { targetSeq, ...rest } = data
      const shadowed = { shadowedRange: { start: targetSeq, end: targetSeq }, shadowedSeqs: [targetSeq] }
      return { ...value, data: { ...rest, ...shadowed } }
    }
    default:
      return value
  }
}
