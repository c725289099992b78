import { describe, expect, it } from 'vitest'
import type { RunProgress } from '../scenarios/matrix.ts'
import { elapsedText, ProgressReporter, progressLine } from './run-progress.ts'

const state = (overrides: Partial<RunProgress> = {}): RunProgress => ({
  sessionsTotal: 113,
  sessionsDone: 12,
  requests: 1234,
  running: ['long-session.default.anthropic', 'idle-ttl.ttl-5m.deepseek'],
  jobs: 2,
  ...overrides,
})

/** A reporter on a clock the test moves, and what it wrote. */
function reporter(mode: ConstructorParameters<typeof ProgressReporter>[0]) {
  let now = 0
  const written: string[] = []
  const progress = new ProgressReporter(mode, { write: (text) => written.push(text), now: () => now })
  return { progress, written, at: (milliseconds: number) => (now = milliseconds) }
}

describe('progress of a run', () => {
  it('says how many sessions are done, the requests, the time, the threads and what runs', () => {
    expect(progressLine(state(), 83_000)).toBe(
      'run 12/113 sessions, 1,234 requests, 1:23 (2 threads): long-session.default.anthropic and 1 more',
    )
    expect(progressLine(state({ running: [], jobs: 1 }), 0)).toBe(
      'run 12/113 sessions, 1,234 requests, 0:00 (1 thread)',
    )
    expect(elapsedText(3_725_000)).toBe('1:02:05')
  })

  it('on a terminal redraws one line in place, cut to the width, and clears it at the end', () => {
    const { progress, written, at } = reporter({ kind: 'live', columns: 40 })
    progress.update(state())
    at(50)
    progress.update(state({ requests: 1300 }))
    at(150)
    progress.update(state({ requests: 1400 }))
    progress.finish()
    expect(written).toHaveLength(3)
    const line = written[0] ?? ''
    expect(line.startsWith('\r') && line.endsWith('\u001b[K')).toBe(true)
    expect(line.length).toBe(1 + 39 + 3)
    expect(written[0]).toContain('…')
    expect(written[1]).toContain('1,400')
    expect(written[2]).toBe('\r\u001b[K')
  })

  it('elsewhere prints nothing for a short run and a plain line per interval for a long one', () => {
    const short = reporter({ kind: 'lines', intervalMs: 10_000 })
    short.progress.update(state())
    short.at(9_000)
    short.progress.update(state())
    short.progress.finish()
    expect(short.written).toEqual([])

    const long = reporter({ kind: 'lines', intervalMs: 10_000 })
    for (const milliseconds of [1_000, 10_000, 15_000, 20_500, 21_000]) {
      long.at(milliseconds)
      long.progress.update(state({ requests: milliseconds }))
    }
    long.at(22_000)
    long.progress.finish()
    expect(long.written).toEqual([
      'cachelab run 12/113 sessions, 10,000 requests, 0:10 (2 threads): long-session.default.anthropic and 1 more\n',
      'cachelab run 12/113 sessions, 20,500 requests, 0:20 (2 threads): long-session.default.anthropic and 1 more\n',
      'cachelab run 12/113 sessions, 21,000 requests, 0:22 (2 threads)\n',
    ])
  })
})
