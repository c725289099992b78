import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { appendOnly } from '../scenarios/append-only.ts'
import { CachelabError, check, run, type SimulationInput, simulate } from './api.ts'

/** The error `action` throws. */
function thrown(action: () => unknown): unknown {
  try {
    action()
  } catch (error) {
    return error
  }
  throw new Error('expected it to throw')
}

describe('run, as a library call', () => {
  it('returns the rows, summaries and claims of a run, with no output directory unless given one', async () => {
    const result = await run({ scenarios: ['append-only'], providers: ['anthropic'] })
    expect(result.outDir).toBeUndefined()
    expect(result.rows.length).toBeGreaterThan(10)
    expect(result.rows.every((row) => row.scenario === 'append-only' && row.provider === 'anthropic')).toBe(
      true,
    )
    expect(result.summaries).toHaveLength(1)
    expect(result.summaries[0]?.hitRatioWarm).toBeGreaterThan(0.9)
    expect(result.claims.map((claim) => claim.status)).not.toContain('fails')
    expect(result.failures).toEqual([])
    expect(result.runId).toMatch(/^sim-[0-9a-f]{8}$/)
  })

  it("runs a user's own Scenario object, under its own name", async () => {
    const mine = { ...appendOnly, name: 'my-loop', claims: [] }
    const { rows, summaries } = await run({ scenarios: [mine], providers: ['openai-chat'] })
    expect(new Set(rows.map((row) => row.scenario))).toEqual(new Set(['my-loop']))
    expect(summaries.map((summary) => `${summary.scenario}/${summary.provider}`)).toEqual([
      'my-loop/openai-chat',
    ])
  })

  it('writes the files `cachelab run` writes when given a directory, which `check` then passes against itself', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cachelab-api-')), 'run')
    const result = await run({ scenarios: ['append-only'], providers: ['deepseek'], out })
    expect(result.outDir).toBe(out)
    for (const file of ['steps.csv', 'summary.csv', 'breaks.csv', 'claims.csv', 'report.html'])
      expect(existsSync(join(out, file))).toBe(true)
    expect(existsSync(join(out, 'sessions', 'append-only.default.deepseek.jsonl'))).toBe(true)
    const verdict = check({ baseline: out, run: out })
    expect(verdict.passed).toBe(true)
    expect(verdict.gate.checked).toBe(1)
    expect(verdict.report).toMatch(/^OK: 1 of 1 baseline sessions hold/)
  })

  it('writes the plan of a one-scenario run, which check judges on that scenario alone against the whole committed baseline', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cachelab-api-')), 'run')
    await run({ scenarios: ['append-only'], providers: ['deepseek'], out })
    expect(JSON.parse(readFileSync(join(out, 'plan.json'), 'utf8'))).toEqual({
      format: 'cachelab-plan',
      version: 1,
      selection: { scenarios: ['append-only'], variants: 'all', providers: ['deepseek'], loops: ['model'] },
      sessions: [{ scenario: 'append-only', variant: 'default', provider: 'deepseek' }],
      leftOut: [],
    })
    const committed = join(import.meta.dirname, '..', 'reports', 'baselines')
    const verdict = check({ baseline: committed, run: out })
    expect(verdict.passed).toBe(true)
    expect(verdict.gate.checked).toBe(1)
    expect(verdict.gate.sessions.map((session) => session.key.scenario)).toEqual(['append-only'])
    expect(verdict.report).not.toContain('missing from the run')
    expect(verdict.report).not.toContain('break gone')
    expect(verdict.report).toMatch(
      /^OK: 1 of 1 baseline sessions hold .*; 168 more baseline sessions are outside the run's plan \(run --scenario append-only --provider deepseek\), not checked$/m,
    )
    // docs/gate.md shows this verdict: its line is the one printed here.
    const shown = readFileSync(new URL('../docs/gate.md', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('OK: 1 of 1 baseline sessions hold'))
    expect(shown).toHaveLength(1)
    expect(verdict.report.split('\n')).toContain(shown[0])
  })

  it('refuses an unknown scenario, variant or provider with a usage error naming the known ones', async () => {
    await expect(run({ scenarios: ['nope'] })).rejects.toThrow(
      /unknown scenario "nope" \(known: append-only, /,
    )
    await expect(run({ scenarios: ['append-only'], variants: ['nope'] })).rejects.toThrow(
      'unknown variant "nope" (known: default)',
    )
    const error = await run({ providers: ['nope' as 'anthropic'] }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CachelabError)
    expect((error as CachelabError).kind).toBe('usage')
  })
})

describe('simulate, as a library call', () => {
  const requests: SimulationInput[] = readFileSync(
    new URL('../providers/sim/testdata/openai-2006.jsonl', import.meta.url),
    'utf8',
  )
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))

  it("reproduces OpenAI's documented example: a repeated 2,006-token prompt reads 1,920", () => {
    const outputs = simulate('openai-chat', requests)
    expect(outputs.map((output) => ('usage' in output ? output.usage.cacheRead : undefined))).toEqual([
      0, 1920,
    ])
  })

  it('names the request at fault, counted from 1', () => {
    const [first, second] = requests as [SimulationInput, SimulationInput]
    const error = thrown(() =>
      simulate('openai-chat', [
        { ...first, at: 10 },
        { ...second, at: 5 },
      ]),
    )
    expect(error).toBeInstanceOf(CachelabError)
    expect((error as Error).message).toBe(
      `request 2: "at" must be a number of seconds, not before the previous request's`,
    )
  })
})

describe('check, as a library call', () => {
  it('is an input error when the run directory is not a finished run', () => {
    const empty = mkdtempSync(join(tmpdir(), 'cachelab-api-'))
    expect(() => check({ baseline: 'reports/baselines', run: empty })).toThrow(
      /is not a finished cachelab run: missing \.cachelab-manifest\.json, steps\.csv, summary\.csv/,
    )
  })
})
