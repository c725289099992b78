// A run folder's files: steps.csv, summary.csv, breaks.csv, claims.csv, report.html and any the command
// adds. Rows go in one at a time: steps.csv is written as they arrive and everything else is built from
// running totals (reports/summary.ts, breaks.ts, session-rows.ts), so a command that streams its rows
// (import) holds no row it has written (notes/2026-12-02-streaming-rows.md). Apart from run-files.ts, which
// evaluates a run's claims and formats its library and loop comparisons: a command that has none (import)
// loads none of that.

import { closeSync, openSync, writeSync } from 'node:fs'
import type { LoopInexpressible } from '../harness/loops/types.ts'
import type { AgentRow } from '../reports/agents.ts'
import type { BreakEvent } from '../reports/break-events.ts'
import { BreakList } from '../reports/breaks.ts'
import { breaksCsv, claimsCsv, STEPS_CSV_HEAD, stepsCsvLines, summaryCsv } from '../reports/csv.ts'
import { writeReport } from '../reports/html.ts'
import type { LibraryReport } from '../reports/libraries.ts'
import type { LoopComparison } from '../reports/loops.ts'
import type { RunFolder } from '../reports/run-folder.ts'
import { RunRows } from '../reports/session-rows.ts'
import { SummaryTally, withClaims } from '../reports/summary.ts'
import type { ClaimResult, StepRow, SummaryRow } from '../reports/types.ts'
import type { NotApplicable } from './requirements.ts'

/** What a run wrote: its summaries (claims counted in) and its claims. */
export interface RunFiles {
  summaries: SummaryRow[]
  claims: ClaimResult[]
}

/** What a run folder is written from, besides its rows. */
export interface RunFilesRest {
  /** The run's id, shown in report.html. */
  runId: string
  /** The claims evaluated on the rows (none for a command that runs no scenario). */
  claims?: readonly ClaimResult[]
  /** Variants left out, listed in report.html. */
  notApplicable?: readonly NotApplicable[]
  /** The model and DSH loops compared request by request (a report section when any; run-files.ts adds loops.csv). */
  comparisons?: readonly LoopComparison[]
  /** Scenario events an external loop could not express, listed in report.html. */
  inexpressible?: readonly LoopInexpressible[]
  /** The session events the breaks name, described for report.html. */
  breakEvents?: readonly BreakEvent[]
  /** The client-library loops side by side: a report section (run-files.ts adds libraries.csv, library-steps.csv). */
  libraries?: LibraryReport
  /** The coding agents side by side: a report section (agents.csv is one of `files`). */
  agents?: readonly AgentRow[]
  /** Further files of the folder (name relative to it → content), written before it is marked complete. */
  files?: Readonly<Record<string, string>>
}

/**
 * A file written from text made a piece at a time, each piece written as it comes: no one string holds
 * the whole file, and no piece is copied into a larger one first (joining the pieces of a page of tens of
 * megabytes cost more than writing them). It is written in the build folder, which `complete` swaps in
 * whole, so it needs no temporary file of its own.
 */
function writeStreamed(path: string, produce: (write: (text: string) => void) => void): void {
  const handle = openSync(path, 'w')
  try {
    produce((text) => {
      writeSync(handle, text)
    })
  } finally {
    closeSync(handle)
  }
}

/** steps.csv lines are written in batches of this many rows. */
const STEPS_BATCH = 1_000

/** A run's files written into an open folder as its rows arrive; `finish` writes the rest. */
export class RunFilesWriter {
  private readonly folder: RunFolder
  private readonly steps: number
  private batch: StepRow[] = []
  private readonly summaries = new SummaryTally()
  private readonly breaks = new BreakList()
  private readonly rows = new RunRows()
  private finished = false

  constructor(folder: RunFolder) {
    this.folder = folder
    this.steps = openSync(folder.path('steps.csv'), 'w')
    writeSync(this.steps, STEPS_CSV_HEAD)
  }

  /** One row, in run order. */
  add(row: StepRow): void {
    this.batch.push(row)
    if (this.batch.length >= STEPS_BATCH) this.flush()
    this.summaries.add(row)
    this.breaks.add(row)
    this.rows.add(row)
  }

  /** Rows added so far. */
  get count(): number {
    return this.rows.count
  }

  /** Write every other file into the folder (not yet marked complete); the summaries count the claims in. */
  finish(run: RunFilesRest): RunFiles {
    this.flush()
    this.close()
    const claims = [...(run.claims ?? [])]
    const summaries = withClaims(this.summaries.result(), claims)
    const folder = this.folder
    folder.write('summary.csv', summaryCsv(summaries))
    folder.write('breaks.csv', breaksCsv(this.breaks.rows))
    folder.write('claims.csv', claimsCsv(claims))
    const comparisons = run.comparisons ?? []
    writeStreamed(folder.path('report.html'), (write) =>
      writeReport(
        {
          rows: this.rows,
          summaries,
          runId: run.runId,
          claims,
          notApplicable: run.notApplicable ?? [],
          comparisons,
          inexpressible: run.inexpressible ?? [],
          breakEvents: run.breakEvents ?? [],
          ...(run.libraries !== undefined ? { libraries: run.libraries } : {}),
          ...(run.agents !== undefined ? { agents: run.agents } : {}),
        },
        write,
      ),
    )
    for (const [name, content] of Object.entries(run.files ?? {})) folder.write(name, content)
    return { summaries, claims }
  }

  /** Stop writing (the folder's owner abandons or completes it). */
  close(): void {
    if (this.finished) return
    this.finished = true
    closeSync(this.steps)
  }

  private flush(): void {
    if (this.batch.length === 0) return
    writeSync(this.steps, stepsCsvLines(this.batch))
    this.batch = []
  }
}
