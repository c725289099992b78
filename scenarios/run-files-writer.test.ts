import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { breaksOf } from '../reports/breaks.ts'
import { breaksCsv, stepsCsv, summaryCsv } from '../reports/csv.ts'
import { RUN_FILES, RunFolder } from '../reports/run-folder.ts'
import { summarize } from '../reports/summary.ts'
import { sessionRows } from '../reports/testing.ts'
import { writeRunFiles } from './run-files.ts'
import { RunFilesWriter } from './run-files-writer.ts'

/** Two interleaved sessions, long enough that steps.csv is written in several batches. */
function rows() {
  const sketch = (variant: string, breakEvery: number) =>
    sessionRows(
      { variant },
      Array.from({ length: 1_700 }, (_, index) =>
        index % breakEvery === breakEvery - 1
          ? {
              turn: index + 1,
              at: index * 4,
              uncached: 5000,
              lost: 4000,
              breakCause: 'tools-changed' as const,
            }
          : { turn: index + 1, at: index * 4, read: 5000, uncached: 12 },
      ),
    )
  const left = sketch('left', 400)
  const right = sketch('right', 650)
  return left.flatMap((row, index) => [row, right[index] ?? row])
}

describe('RunFilesWriter', () => {
  it('writes the same files row by row as the whole-row functions give', () => {
    const all = rows()
    const out = mkdtempSync(join(tmpdir(), 'cachelab-run-files-'))
    writeRunFiles(out, { runId: 'sim-0001', rows: all, scenarios: [] })
    expect(readFileSync(join(out, 'steps.csv'), 'utf8')).toBe(stepsCsv(all))
    expect(readFileSync(join(out, 'summary.csv'), 'utf8')).toBe(summaryCsv(summarize(all)))
    expect(readFileSync(join(out, 'breaks.csv'), 'utf8')).toBe(breaksCsv(breaksOf(all)))
  })

  it('leaves the folder’s previous run in place when the writer is given up part-way', () => {
    const all = rows()
    const out = mkdtempSync(join(tmpdir(), 'cachelab-run-files-'))
    writeRunFiles(out, { runId: 'sim-0001', rows: all.slice(0, 10), scenarios: [] })
    const before = readFileSync(join(out, 'steps.csv'), 'utf8')
    const folder = RunFolder.replace(out, { writer: 'import', files: [...RUN_FILES] })
    const writer = new RunFilesWriter(folder)
    for (const row of all) writer.add(row)
    writer.close()
    folder.abandon()
    expect(readFileSync(join(out, 'steps.csv'), 'utf8')).toBe(before)
  })
})
