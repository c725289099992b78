import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { stepsCsv, summaryCsv } from '../reports/csv.ts'
import { summarize } from '../reports/summary.ts'
import { sessionRows } from '../reports/testing.ts'
import { runCli } from './testing.ts'

const before = [
  ...sessionRows({ scenario: 'append-only' }, [{ uncached: 1000 }, { read: 900, uncached: 100 }]),
  ...sessionRows({ scenario: 'system-change' }, [{ uncached: 1000 }, { read: 500, uncached: 500 }]),
]
const after = [
  ...sessionRows({ scenario: 'append-only' }, [{ uncached: 1000 }, { read: 950, uncached: 50 }]),
  ...sessionRows({ scenario: 'tool-churn' }, [{ uncached: 1000 }, { read: 100, uncached: 900 }]),
]
const dir = mkdtempSync(join(tmpdir(), 'cachelab-compare-'))
const file = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}
const summaryA = file('a-summary.csv', summaryCsv(summarize(before)))
const summaryB = file('b-summary.csv', summaryCsv(summarize(after)))
const stepsA = file('a-steps.csv', stepsCsv(before))
const stepsB = file('b-steps.csv', stepsCsv(after))

const compare = (...argv: string[]) => runCli(['compare', ...argv])

describe('cachelab compare', () => {
  it('puts two summary.csv files side by side and exits 0', async () => {
    const result = await compare(summaryA, summaryB)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`A: ${summaryA} (summary.csv, run sim-test)`)
    expect(result.stdout).toMatch(/append-only\s+default\s+anthropic\s+90\.00%\s+95\.00%\s+\+5\.00\s+0\s+0/)
    expect(result.stdout).toMatch(/system-change .* only in A\n/)
    expect(result.stdout).toMatch(/tool-churn .* only in B\n/)
  })

  it('summarizes two steps.csv files first, to the same table', async () => {
    const fromSteps = await compare(stepsA, stepsB)
    const fromSummaries = await compare(summaryA, summaryB)
    expect(fromSteps.code).toBe(0)
    const table = (text: string) => text.slice(text.indexOf('scenario'))
    expect(table(fromSteps.stdout)).toBe(table(fromSummaries.stdout))
  })

  it('puts three runs side by side against the first, a run folder standing for its summary.csv', async () => {
    const third = [
      ...sessionRows({ scenario: 'append-only' }, [{ uncached: 1000 }, { read: 700, uncached: 300 }]),
      ...sessionRows({ scenario: 'system-change' }, [{ uncached: 1000 }, { read: 500, uncached: 500 }]),
    ]
    const folder = join(dir, 'run-c')
    mkdirSync(folder)
    writeFileSync(join(folder, 'summary.csv'), summaryCsv(summarize(third)))
    const result = await compare(summaryA, stepsB, folder)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`C: ${join(folder, 'summary.csv')} (summary.csv, run sim-test)`)
    expect(result.stdout).toMatch(/hit warm A\s+hit warm B\s+hit warm C/)
    expect(result.stdout).toMatch(
      /append-only\s+default\s+anthropic\s+90\.00%\s+95\.00% \(\+5\.00\)\s+70\.00% \(-20\.00\)/,
    )
    expect(result.stdout).toMatch(/system-change .*50\.00%\s+-\s+50\.00% \(0\.00\).* not in B\n/)
    expect(result.stdout).toMatch(/tool-churn .* not in A, C\n/)
  })

  it('exits 0 even when B is worse: the comparison is informational', async () => {
    expect((await compare(summaryB, summaryA)).code).toBe(0)
  })

  it.each([
    [() => [summaryA], /compare needs two files or more, got 1/],
    [() => [summaryA, join(dir, 'nope.csv')], /cannot read .*nope\.csv: no such file/],
    [
      () => [
        summaryA,
        file(
          'bad.csv',
          summaryCsv(summarize(after)).replace('tool-churn,default,anthropic', 'tool-churn,default,ACME'),
        ),
      ],
      /bad\.csv:3: column provider: unknown value "ACME"/,
    ],
    [
      () => [summaryA, file('other.csv', 'name,age\nada,36\n')],
      /other\.csv:1: not a cachelab steps\.csv or summary\.csv/,
    ],
  ])('exits 2 with a one-line reason (case %#)', async (argv, reason) => {
    const result = await compare(...argv())
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(reason)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
  })
})
