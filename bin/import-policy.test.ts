// `cachelab import --policy` end to end: DSH sessions re-derived under a series-start policy, per session
// in the terminal and policy.csv, per request in policy-steps.csv.

import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import { parseStepsCsv } from '../reports/parse.ts'
import { runCli } from './testing.ts'

const testdata = (name: string) => resolve('reports/observed/transcripts/testdata', name)
const CONSOLIDATE = testdata('dsh-c-consolidate.jsonl')
const KEEP_LIVE = testdata('dsh-c-keep-live.jsonl')
const CONSOLIDATE_SESSION = '3c0d51a4-6b2e-4f1a-9c3d-2e5f7a8b9c01'
const KEEP_LIVE_SESSION = '4d1e62b5-7c3f-4a2b-8d4e-3f6a8b9c0d12'

type Records = Array<Record<string, string>>

/** Import `files` with `flags` into a fresh directory; the printed text and both CSVs' records. */
async function importPolicy(files: readonly string[], flags: readonly string[]) {
  const out = mkdtempSync(join(tmpdir(), 'cachelab-import-policy-'))
  const { code, stdout, stderr } = await runCli(['import', ...files, '--out', out, ...flags])
  const csv = (name: string) =>
    existsSync(join(out, name))
      ? (parse(readFileSync(join(out, name), 'utf8'), { columns: true }) as Records)
      : []
  return { code, stdout, stderr, out, sessions: csv('policy.csv'), steps: csv('policy-steps.csv') }
}

describe('cachelab import --policy on generation C DSH logs', () => {
  it('re-derives each log under keep-live: the consolidating one gains its series-start read, the other is unchanged', async () => {
    const { code, stdout, sessions, steps } = await importPolicy(
      [CONSOLIDATE, KEEP_LIVE],
      ['--policy', 'keep-live'],
    )
    expect(code).toBe(0)
    const consolidating = sessions.find((record) => record.session === CONSOLIDATE_SESSION)
    expect(consolidating).toMatchObject({
      format: 'dsh',
      recorded_policy: 'consolidate',
      policy: 'keep-live',
      requests: '8',
      not_applicable: '0',
      first_difference_turn: '4',
      first_difference_step: '1',
      first_difference_node: 'messages[0]',
    })
    expect(Number(consolidating?.difference_cache_read_tokens)).toBeGreaterThan(0)
    expect(Number(consolidating?.difference_cache_read_tokens)).toBe(
      Number(consolidating?.policy_cache_read_tokens) - Number(consolidating?.replayed_cache_read_tokens),
    )
    const keptLive = sessions.find((record) => record.session === KEEP_LIVE_SESSION)
    expect(keptLive).toMatchObject({
      recorded_policy: 'keep-live',
      first_difference_node: '',
      difference_cost_usd: '0.00000000',
    })
    // The series-start request of the consolidating log, side by side.
    const series = steps.find((record) => record.session === CONSOLIDATE_SESSION && record.turn === '4')
    expect(series).toMatchObject({
      series_start: 'true',
      recorded_as: 'consolidate',
      replayed_cache_read_tokens: '0',
    })
    expect(Number(series?.policy_cache_read_tokens)).toBeGreaterThan(1500)
    expect(steps.filter((record) => record.session === CONSOLIDATE_SESSION)).toHaveLength(8)
    expect(stdout).toMatch(/the DSH sessions re-derived under keep-live/)
    expect(stdout).toMatch(
      new RegExp(`dsh · ${CONSOLIDATE_SESSION}\\s+consolidate\\s+8\\s+turn 4 step 1 messages\\[0\\]`),
    )
    expect(stdout).toMatch(
      /--policy keep-live: 2 DSH sessions re-derived \(recorded as consolidate 1, keep-live 1\); cache read [\d,]+ → [\d,]+ \(\+[\d,]+\), cost \$[\d.]+ → \$[\d.]+ \([-+]\$[\d.]+\); 0 not applicable/,
    )
  })

  it("keeps the recorded side the rows' own: the session's recorded cost is steps.csv's", async () => {
    const { out, sessions } = await importPolicy([CONSOLIDATE], ['--policy', 'consolidate'])
    const rows = parseStepsCsv(readFileSync(join(out, 'steps.csv'), 'utf8'), 'steps.csv')
    const [session] = sessions
    expect(Number(session?.recorded_cost_usd)).toBeCloseTo(
      rows.reduce((sum, row) => sum + row.costUsd, 0),
      // steps.csv rounds each row to 8 decimals.
      7,
    )
    // The recorded policy re-derives the recorded requests: both replays agree.
    expect(session?.difference_cache_read_tokens).toBe('0')
    expect(session?.policy_cost_usd).toBe(session?.replayed_cost_usd)
  })

  it('lists a generation B log and its summarizer call as not applicable, with the reason', async () => {
    const { code, stdout, sessions } = await importPolicy(
      [CONSOLIDATE, testdata('dsh-session.jsonl')],
      ['--policy', 'keep-live'],
    )
    expect(code).toBe(0)
    const header = sessions.find((record) => record.session === '5a0c6a52-3f1e-4d0b-9a53-0c1f7d2e4b10')
    expect(header).toMatchObject({ recorded_policy: 'not-applicable', requests: '0', not_applicable: '5' })
    expect(header?.not_applicable_reason).toMatch(/generation B/)
    expect(stdout).toMatch(/not re-derived \(every one in policy\.csv\):/)
    expect(stdout).toMatch(/dsh-session\.jsonl:43/)
    expect(stdout).toMatch(/1 DSH session re-derived .*; 2 not applicable/)
  })

  it('says so when no DSH session could be re-derived', async () => {
    const { code, stdout } = await importPolicy([testdata('dsh-session.jsonl')], ['--policy', 'consolidate'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/--policy consolidate: no DSH session re-derived; 2 not applicable/)
  })

  it('works beside --as, each writing its own files', async () => {
    const { code, out } = await importPolicy([CONSOLIDATE], ['--policy', 'keep-live', '--as', 'anthropic'])
    expect(code).toBe(0)
    expect(existsSync(join(out, 'counterfactual.csv'))).toBe(true)
    expect(existsSync(join(out, 'policy.csv'))).toBe(true)
  })

  it('refuses an unknown policy listing the values, and inputs without a DSH log', async () => {
    const unknown = await runCli(['import', CONSOLIDATE, '--policy', 'rewrite'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/--policy must be one of consolidate, keep-live, not rewrite/)
    const codex = testdata('codex-basic.jsonl')
    const none = await runCli(['import', codex, '--policy', 'keep-live'])
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(/--policy re-derives DSH logs, and none is among the inputs \(read: codex\)/)
    expect((await runCli(['import', codex, '--format', 'codex', '--policy', 'keep-live'])).code).toBe(2)
  })
})
