// `cachelab run`'s progress on stderr: on a terminal one live line, redrawn in place; anywhere else (CI,
// a pipe, a file) a plain line every so often, so a log shows what runs and how far without a flood.

import { unreachable } from '../harness/errors.ts'
import type { RunProgress } from '../scenarios/matrix.ts'

/** How progress is shown. */
export type ProgressMode =
  /** One line redrawn in place (a terminal). */
  | { kind: 'live'; columns: number }
  /** Plain lines, at most one per interval (CI logs, pipes). */
  | { kind: 'lines'; intervalMs: number }

/** Where progress goes and what time it is. */
export interface ProgressOutput {
  write(text: string): void
  /** Milliseconds on any monotonic clock. */
  now(): number
}

/** Redraws of a live line at most this often: a terminal needs no more, and writes cost. */
const LIVE_REDRAW_MS = 100

/** Plain progress lines at most this often by default. */
export const PROGRESS_INTERVAL_MS = 10_000

/** Elapsed time as `m:ss` (`h:mm:ss` past an hour). */
export function elapsedText(milliseconds: number): string {
  const total = Math.floor(milliseconds / 1000)
  const hours = Math.floor(total / 3600)
  const minutes = Math.floor((total % 3600) / 60)
  const seconds = String(total % 60).padStart(2, '0')
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`
}

/**
 * One progress line: sessions done of the total, requests, elapsed time, threads, and the sessions
 * running (the first by name, the rest counted).
 */
export function progressLine(progress: RunProgress, elapsedMs: number): string {
  const [first, ...others] = progress.running
  const running =
    first === undefined ? '' : `: ${first}${others.length > 0 ? ` and ${others.length} more` : ''}`
  return (
    `run ${progress.sessionsDone}/${progress.sessionsTotal} sessions, ` +
    `${progress.requests.toLocaleString('en-US')} requests, ${elapsedText(elapsedMs)} ` +
    `(${progress.jobs} ${progress.jobs === 1 ? 'thread' : 'threads'})${running}`
  )
}

/** A line cut to fit `columns` (one column kept free so the terminal never wraps). */
function fitted(line: string, columns: number): string {
  const width = Math.max(20, columns - 1)
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`
}

/** Shows a run's progress as it changes; `finish` leaves the output as a clean place for what follows. */
export class ProgressReporter {
  readonly #mode: ProgressMode
  readonly #output: ProgressOutput
  readonly #started: number
  #last: number
  #latest: RunProgress | undefined
  #shown = false

  constructor(mode: ProgressMode, output: ProgressOutput) {
    this.#mode = mode
    this.#output = output
    this.#started = output.now()
    // The first plain line waits a whole interval: a short run prints nothing.
    this.#last = mode.kind === 'live' ? Number.NEGATIVE_INFINITY : this.#started
  }

  /** A new state of the run: shown if enough time has passed since the last one. */
  update(progress: RunProgress): void {
    this.#latest = progress
    const now = this.#output.now()
    const mode = this.#mode
    switch (mode.kind) {
      case 'live':
        if (now - this.#last < LIVE_REDRAW_MS) return
        this.#output.write(`\r${fitted(progressLine(progress, now - this.#started), mode.columns)}\u001b[K`)
        break
      case 'lines':
        if (now - this.#last < mode.intervalMs) return
        this.#output.write(`cachelab ${progressLine(progress, now - this.#started)}\n`)
        break
      default:
        unreachable(mode)
    }
    this.#last = now
    this.#shown = true
  }

  /** The run is over: a live line is cleared; plain lines end with the final count, if any were shown. */
  finish(): void {
    if (!this.#shown) return
    const mode = this.#mode
    switch (mode.kind) {
      case 'live':
        this.#output.write('\r\u001b[K')
        return
      case 'lines':
        if (this.#latest !== undefined)
          this.#output.write(
            `cachelab ${progressLine({ ...this.#latest, running: [] }, this.#output.now() - this.#started)}\n`,
          )
        return
      default:
        unreachable(mode)
    }
  }
}
