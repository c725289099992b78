import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { stepsCsv, summaryCsv } from '../reports/csv.ts'
import { readBreaksCsv, readSummaryCsv } from '../reports/load.ts'
import { planText } from '../reports/plan.ts'
import { summarize } from '../reports/summary.ts'
import { sessionRows } from '../reports/testing.ts'
import type { StepRow, SummaryRow } from '../reports/types.ts'
import { finishedRunDir, runCli, withEnv } from './testing.ts'

const steps = [
  ...sessionRows({ scenario: 'append-only' }, [{ uncached: 1000 }, { read: 900, uncached: 100 }]),
  ...sessionRows({ scenario: 'system-change' }, [
    { uncached: 1000 },
    { read: 800, uncached: 200 },
    { read: 850, uncached: 150 },
  ]),
]

/** A run directory with a summary.csv (from `summary`, or from `rows`) and, when given, a steps.csv. */
function runDir(rows: readonly StepRow[] | undefined, summary?: readonly SummaryRow[]): string {
  return finishedRunDir({
    'summary.csv': summaryCsv(summary ?? summarize(rows ?? [])),
    ...(rows !== undefined ? { 'steps.csv': stepsCsv(rows) } : {}),
  })
}

function raised(scenario: string, points: number): SummaryRow[] {
  return summarize(steps).map((row) =>
    row.scenario === scenario ? { ...row, hitRatioWarm: (row.hitRatioWarm ?? 0) + points / 100 } : row,
  )
}

const check = (...argv: string[]) => runCli(['check', ...argv])

describe('cachelab check', () => {
  it('exits 0 with an OK line when the run equals its baseline', async () => {
    const result = await check('--baseline', runDir(steps), '--out', runDir(steps))
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
    expect(result.stdout).toMatch(
      /^OK: 2 of 2 baseline sessions hold \(tolerances: hit ratio 0\.5 pp, cost 1%, breaks 1,024 tokens\), no claim fails\n/,
    )
  })

  it('exits 1 naming the session whose baseline hit ratio is 5 points higher', async () => {
    const result = await check(
      '--baseline',
      runDir(undefined, raised('system-change', 5)),
      '--out',
      runDir(steps),
    )
    expect(result.code).toBe(1)
    expect(result.stdout).toContain(
      'FAIL  system-change · default · anthropic: warm hit ratio 87.50% → 82.50% (-5.00 pp)',
    )
    expect(result.stdout).not.toMatch(/FAIL {2}append-only/)
    expect(result.stdout).toMatch(/check failed: 1 failures over 2 baseline sessions/)
  })

  it('respects --tolerance in percentage points', async () => {
    const baseline = runDir(undefined, raised('system-change', 5))
    expect((await check('--baseline', baseline, '--out', runDir(steps), '--tolerance', '5')).code).toBe(0)
    expect((await check('--baseline', baseline, '--out', runDir(steps), '--tolerance', '4.9')).code).toBe(1)
  })

  it('exits 1 when a baseline session is missing from the run', async () => {
    const run = runDir(steps.filter((row) => row.scenario === 'append-only'))
    const result = await check('--baseline', runDir(steps), '--out', run)
    expect(result.code).toBe(1)
    expect(result.stdout).toContain('FAIL  system-change · default · anthropic: missing from the run')
  })

  it('names the fallen steps when both directories hold a steps.csv', async () => {
    const worse = steps.map((row) =>
      row.scenario === 'system-change' && row.step === 3
        ? {
            ...row,
            cacheReadTokens: 0,
            uncachedTokens: 1000,
            hitRatio: 0,
            breakCause: 'tools-changed' as const,
          }
        : row,
    )
    const result = await check('--baseline', runDir(steps), '--out', runDir(worse))
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(
      /system-change · default · anthropic: warm hit ratio .* steps that fell: 1\.3 -85\.00pp tools-changed/,
    )
  })

  it('exits 2 with the file and line of a malformed baseline', async () => {
    const baseline = runDir(steps)
    writeFileSync(join(baseline, 'summary.csv'), summaryCsv(summarize(steps)).replace('0.825000', 'lots'))
    const result = await check('--baseline', baseline, '--out', runDir(steps))
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/summary\.csv:3: column hit_ratio_warm: expected a number, got "lots"\n$/)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('exits 2 when the run directory has no summary.csv, naming it and the missing marker', async () => {
    const run = mkdtempSync(join(tmpdir(), 'cachelab-empty-'))
    const result = await check('--baseline', runDir(steps), '--out', run)
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(
      `cachelab: run directory ${run} is not a finished cachelab run: missing .cachelab-manifest.json, steps.csv, summary.csv, breaks.csv, claims.csv, report.html (an interrupted run, or files not written by cachelab run, report or import); run cachelab run first, or name a run directory with --out DIR\n`,
    )
  })

  it('exits 2 on a run folder without its completion marker, though every file is there', async () => {
    const run = runDir(steps)
    rmSync(join(run, '.cachelab-manifest.json'))
    const result = await check('--baseline', runDir(steps), '--out', run)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(
      `run directory ${run} is not a finished cachelab run: missing .cachelab-manifest.json,`,
    )
  })

  it('exits 2 on a run that never finished writing, naming the folder and what is missing', async () => {
    const run = runDir(steps)
    const manifest = join(run, '.cachelab-manifest.json')
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('"complete"', '"writing"'))
    rmSync(join(run, 'steps.csv'))
    const result = await check('--baseline', runDir(steps), '--out', run)
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(
      `cachelab: run directory ${run} is incomplete (.cachelab-manifest.json says cachelab test never finished): missing the completion marker, steps.csv; write it again\n`,
    )
  })

  it.each([
    [['--tolerance', 'half'], /--tolerance takes percentage points/],
    [['--tolerance', '-1'], /--tolerance/],
    [['--cost-tolerance', 'x'], /--cost-tolerance takes percent/],
    [['--break-threshold', 'many'], /--break-threshold takes tokens/],
    [['--provider', 'acme'], /unknown provider "acme"/],
    [['--update', '--scenario', 'append-only'], /--update refreshes the whole baseline/],
    [[], /check needs --baseline DIR/],
  ])('exits 2 on bad options %j', async (argv, reason) => {
    const withBaseline =
      argv.length === 0 ? argv : ['--baseline', runDir(steps), '--out', runDir(steps), ...argv]
    const result = await check(...withBaseline)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(reason)
  })

  it('exits 2 on a baseline with no rows, which would check nothing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'cachelab-check-'))
    writeFileSync(join(empty, 'summary.csv'), summaryCsv([]))
    const result = await check('--baseline', empty, '--out', runDir(steps))
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/has no rows in scope: nothing to check/)
  })

  it('gates only the sessions in scope: a regression elsewhere does not fail it', async () => {
    const baseline = runDir(undefined, raised('system-change', 5))
    const run = runDir(steps)
    expect((await check('--baseline', baseline, '--out', run, '--scenario', 'append-only')).code).toBe(0)
    expect((await check('--baseline', baseline, '--out', run, '--scenario', 'system-change')).code).toBe(1)
    expect((await check('--baseline', baseline, '--out', run, '--provider', 'deepseek')).code).toBe(2)
  })

  it('lists a run better than its baseline as a change, and fails it only with --strict', async () => {
    const baseline = runDir(undefined, raised('system-change', -5))
    const lenient = await check('--baseline', baseline, '--out', runDir(steps))
    expect(lenient.code).toBe(0)
    expect(lenient.stdout).toContain('refresh the baseline')
    expect((await check('--baseline', baseline, '--out', runDir(steps), '--strict')).code).toBe(1)
  })

  it('fails on a new break that costs more than the threshold, naming turn.step, cause, node, event and tokens', async () => {
    const broken = steps.map((row) =>
      row.scenario === 'system-change' && row.step === 3
        ? {
            ...row,
            lostTokens: 850,
            idealCacheReadTokens: 850,
            breakCause: 'system-replace' as const,
            breakNode: 'system[0]',
            breakEventSeq: 7,
          }
        : row,
    )
    const result = await check(
      '--baseline',
      runDir(steps),
      '--out',
      runDir(broken),
      '--break-threshold',
      '500',
    )
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(
      /FAIL {2}new break: system-change · default · anthropic 1\.3: system-replace at system\[0\] \(event 7\), 850 tokens lost \(\$0\.\d{4}\)/,
    )
    expect((await check('--baseline', runDir(steps), '--out', runDir(broken))).code).toBe(0)
  })

  it('writes the run into the baseline with --update, so the next check compares against it', async () => {
    const baseline = runDir(undefined, raised('system-change', 5))
    const run = runDir(steps)
    const result = await check('--baseline', baseline, '--out', run, '--update')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(`updated ${baseline}/{summary.csv,breaks.csv,claims.csv} from ${run}`)
    expect(readSummaryCsv(join(baseline, 'summary.csv'))).toEqual(readSummaryCsv(join(run, 'summary.csv')))
    expect((await check('--baseline', baseline, '--out', run)).code).toBe(0)
  })
})

describe('cachelab check --reporter', () => {
  const worse = steps.map((row) =>
    row.scenario === 'system-change' && row.step === 3
      ? { ...row, cacheReadTokens: 0, uncachedTokens: 1000, hitRatio: 0 }
      : row,
  )
  /** Run check outside GitHub Actions, whatever runs this test. */
  const quietCheck = (...argv: string[]) =>
    withEnv({ GITHUB_ACTIONS: undefined, GITHUB_STEP_SUMMARY: undefined }, () => check(...argv))

  it('writes several reporters at once, each to stdout or its file, and keeps the exit code', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-reporters-'))
    const junit = join(out, 'nested', 'junit.xml')
    const json = join(out, 'gate.json')
    const result = await quietCheck(
      '--baseline',
      runDir(steps),
      '--out',
      runDir(worse),
      '--reporter',
      `text,junit=${junit},json=${json}`,
    )
    expect(result.code).toBe(1)
    expect(result.stdout).toContain('FAIL  system-change · default · anthropic: warm hit ratio')
    expect(readFileSync(junit, 'utf8')).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites /)
    expect(JSON.parse(readFileSync(json, 'utf8')).passed).toBe(false)
  })

  it('prints only JSON with --json, which parses', async () => {
    const result = await quietCheck('--baseline', runDir(steps), '--out', runDir(steps), '--json')
    expect(result.code).toBe(0)
    const document = JSON.parse(result.stdout)
    expect(document.passed).toBe(true)
    expect(document.sessions).toHaveLength(2)
  })

  it.each([
    [['--reporter', 'xml'], 'unknown reporter "xml": --reporter takes text, json, junit, github'],
    [['--reporter', 'junit='], '--reporter junit= needs a file after the ='],
    [
      ['--reporter', 'text,json'],
      '--reporter json writes one document to stdout, and text would write there too',
    ],
    [['--reporter', 'json', '--json'], '--json is --reporter json: give one of them'],
    [['--reporter', 'text,text=x.txt'], '--reporter names text twice'],
  ])('exits 2 on %j, saying what is wrong and the syntax', async (argv, reason) => {
    const result = await quietCheck('--baseline', runDir(steps), '--out', runDir(steps), ...argv)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(reason)
    expect(result.stdout).toBe('')
  })

  it('annotates for GitHub and appends the step summary when GITHUB_ACTIONS=true, without being asked', async () => {
    const summary = join(mkdtempSync(join(tmpdir(), 'cachelab-summary-')), 'step-summary.md')
    writeFileSync(summary, '# earlier step\n')
    const result = await withEnv({ GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary }, () =>
      check('--baseline', runDir(steps), '--out', runDir(worse)),
    )
    expect(result.code).toBe(1)
    expect(result.stdout).toContain('FAIL  system-change · default · anthropic: warm hit ratio')
    expect(result.stdout).toMatch(
      /^::error title=cachelab%3A hit-ratio · system-change · default · anthropic::/m,
    )
    expect(readFileSync(summary, 'utf8')).toMatch(
      /^# earlier step\n### cachelab check fails: 1 failures in 1 of 2/,
    )
    // With JSON on stdout, the annotations go to stderr, which the runner reads as well.
    const json = await withEnv({ GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary }, () =>
      check('--baseline', runDir(steps), '--out', runDir(worse), '--json'),
    )
    expect(JSON.parse(json.stdout).passed).toBe(false)
    expect(json.stderr).toMatch(/^::error title=/m)
  })

  it('refuses --update from a run whose plan leaves baseline sessions out, which would shrink the baseline', async () => {
    const baseline = runDir(steps)
    const only = steps.filter((row) => row.scenario === 'append-only')
    const run = finishedRunDir({
      'summary.csv': summaryCsv(summarize(only)),
      'steps.csv': stepsCsv(only),
      'plan.json': planText({
        selection: { scenarios: ['append-only'], variants: 'all', providers: 'all', loops: ['model'] },
        sessions: [{ scenario: 'append-only', variant: 'default', provider: 'anthropic' }],
        leftOut: [],
      }),
    })
    const checked = await quietCheck('--baseline', baseline, '--out', run)
    expect(checked.code).toBe(0)
    expect(checked.stdout).toContain(
      "OK: 1 of 1 baseline sessions hold (tolerances: hit ratio 0.5 pp, cost 1%, breaks 1,024 tokens), no claim fails; 1 more baseline session is outside the run's plan (run --scenario append-only), not checked",
    )
    const update = await quietCheck('--baseline', baseline, '--out', run, '--update')
    expect(update.code).toBe(2)
    expect(update.stderr).toContain(
      "--update writes the whole baseline from the run, but the run's plan leaves out 1",
    )
    expect(update.stdout).toBe('')
    expect(readSummaryCsv(join(baseline, 'summary.csv'))).toHaveLength(2)
    expect(existsSync(join(baseline, 'plan.json'))).toBe(false)
  })
})

describe('the committed baselines', () => {
  const committed = join(import.meta.dirname, '..', 'reports', 'baselines')

  /** A run directory holding the committed summary and breaks, and a steps.csv with no rows. */
  function committedRun(summary = readSummaryCsv(join(committed, 'summary.csv'))): string {
    return finishedRunDir({
      'summary.csv': summaryCsv(summary),
      'breaks.csv': readFileSync(join(committed, 'breaks.csv'), 'utf8'),
      'steps.csv': stepsCsv([]),
    })
  }

  it('keep every break and every claim, all holding', () => {
    const summary = readSummaryCsv(join(committed, 'summary.csv'))
    const breaks = readBreaksCsv(join(committed, 'breaks.csv'))
    expect(breaks.some((entry) => entry.scenario === 'long-session')).toBe(false)
    expect(breaks.length).toBe(summary.reduce((sum, row) => sum + row.breaks, 0))
    expect(summary.every((row) => row.claimsFailed === 0)).toBe(true)
    const claims = readFileSync(join(committed, 'claims.csv'), 'utf8')
    expect(claims).not.toMatch(/,fails,/)
  })

  it('hold against a run that matches them', async () => {
    const result = await check('--baseline', committed, '--out', committedRun())
    expect(result.code).toBe(0)
  })

  it('fail, naming the scenario, when one baseline hit ratio is raised by 5 points', async () => {
    const rows = readSummaryCsv(join(committed, 'summary.csv'))
    const target = rows.find((row) => row.scenario === 'prompt-change' && row.provider === 'anthropic')
    if (target === undefined) throw new Error('prompt-change on anthropic is missing from the baseline')
    const baseline = mkdtempSync(join(tmpdir(), 'cachelab-baseline-'))
    writeFileSync(
      join(baseline, 'summary.csv'),
      summaryCsv(
        rows.map((row) => (row === target ? { ...row, hitRatioWarm: (row.hitRatioWarm ?? 0) + 0.05 } : row)),
      ),
    )
    const result = await check('--baseline', baseline, '--out', committedRun())
    expect(result.code).toBe(1)
    expect(result.stdout).toContain(`FAIL  prompt-change · ${target.variant} · anthropic: warm hit ratio`)
  })
})
