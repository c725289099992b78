// For tests and tools that want a whole transcript at once: every request a reader yields from a file,
// with the problems and notes it reported beside them.

import type { ObservedRequest, TranscriptProblem, TranscriptReader } from './types.ts'

/** A file's requests, and what its reader reported while reading it. */
export interface ReadAll {
  requests: ObservedRequest[]
  problems: TranscriptProblem[]
  notes: TranscriptProblem[]
}

/** Read a whole file with `reader` (lenient or not), collecting its requests, problems and notes. */
export async function readAll(reader: TranscriptReader, file: string, lenient = false): Promise<ReadAll> {
  const result: ReadAll = { requests: [], problems: [], notes: [] }
  const options = {
    lenient,
    onProblem: (problem: TranscriptProblem) => result.problems.push(problem),
    onNote: (note: TranscriptProblem) => result.notes.push(note),
  }
  for await (const request of reader(file, options)) result.requests.push(request)
  return result
}
