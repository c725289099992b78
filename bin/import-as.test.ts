// `cachelab import --as PROVIDER` end to end: a DSH log's requests replayed as another provider, per
// session beside the recorded usage, in the terminal and in counterfactual.csv.

import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parse } from 'csv-parse/sync'
import { describe, expect, it } from 'vitest'
import { parseStepsCsv } from '../reports/parse.ts'
import { runCli } from './testing.ts'

const DSH = resolve('reports/observed/transcripts/testdata/dsh-session.jsonl')
const SESSION = '5a0c6a52-3f1e-4d0b-9a53-0c1f7d2e4b10'

/** Import `files` with `flags` into a fresh directory; the printed text and the counterfactual records. */
async function importAs(files: readonly string[], flags: readonly string[]) {
  const out = mkdtempSync(join(tmpdir(), 'cachelab-import-as-'))
  const { code, stdout } = await runCli(['import', ...files, '--out', out, ...flags])
  const records = parse(readFileSync(join(out, 'counterfactual.csv'), 'utf8'), { columns: true }) as Array<
    Record<string, string>
  >
  return { code, stdout, out, records }
}

describe('cachelab import --as anthropic on a DSH log', () => {
  it('replays every request with a body as Anthropic and writes one counterfactual row per session', async () => {
    const { code, stdout, out, records } = await importAs([DSH], ['--as', 'anthropic'])
    expect(code).toBe(0)
    const main = records.find((record) => record.session === SESSION)
    expect(main).toMatchObject({
      format: 'dsh',
      requests: '5',
      as_provider: 'anthropic',
      as_model: 'claude-sonnet-4-6',
    })
    expect(Number(main?.as_input_tokens)).toBeGreaterThan(0)
    expect(Number(main?.as_cost_usd)).toBeGreaterThan(0)
    // The recorded side is the rows' own: the same requests' cost as steps.csv has it.
    const steps = parseStepsCsv(readFileSync(join(out, 'steps.csv'), 'utf8'), 'steps.csv').filter(
      (row) => row.variant === SESSION,
    )
    expect(Number(main?.recorded_cost_usd)).toBeCloseTo(
      steps.reduce((sum, row) => sum + row.costUsd, 0),
      8,
    )
    expect(stdout).toMatch(/the sessions replayed as anthropic claude-sonnet-4-6/)
    expect(stdout).toMatch(new RegExp(`dsh · ${SESSION}\\s+5\\s`))
  })

  it('counts and lists the summarizer call, whose body the log does not hold, as not rebuildable', async () => {
    const { stdout, out, records } = await importAs([DSH], ['--as', 'anthropic'])
    const summarizer = records.find((record) => record.session === `${SESSION}.compaction`)
    expect(summarizer).toMatchObject({ requests: '0', not_rebuildable: '1' })
    expect(stdout).toMatch(/dsh: 1 requests, the transcript holds no request body: .*dsh-session\.jsonl:43/)
    expect(readFileSync(join(out, 'not-rebuildable.csv'), 'utf8')).toContain('dsh-session.jsonl:43')
  })

  it('prices the predictions from the catalog: Opus 4.8 costs 5/3 of Sonnet 4.6 for the same tokens', async () => {
    const sonnet = (await importAs([DSH], ['--as', 'anthropic'])).records.find(
      (record) => record.session === SESSION,
    )
    const opus = (await importAs([DSH], ['--as', 'anthropic', '--model', 'claude-opus-4-8'])).records.find(
      (record) => record.session === SESSION,
    )
    expect(opus?.as_model).toBe('claude-opus-4-8')
    expect(opus?.as_input_tokens).toBe(sonnet?.as_input_tokens)
    expect(Number(opus?.as_cost_usd)).toBeCloseTo((Number(sonnet?.as_cost_usd) * 5) / 3, 8)
  })

  it('replays as DeepSeek itself to within one 128-token unit of the recorded read, on the grid', async () => {
    const { records } = await importAs([DSH], ['--as', 'deepseek', '--model', 'deepseek-flash'])
    const main = records.find((record) => record.session === SESSION)
    const read = Number(main?.as_cache_read_tokens)
    // The fixture's reads were written from the documented mode's exact positions; V4 reads on the grid.
    expect(read % 128).toBe(0)
    expect(Math.abs(read - Number(main?.recorded_cache_read_tokens))).toBeLessThanOrEqual(128)
  })

  it('refuses an unknown provider or model, and --model without --as', async () => {
    expect((await runCli(['import', DSH, '--as', 'acme'])).code).toBe(2)
    expect((await runCli(['import', DSH, '--as', 'anthropic', '--model', 'claude-2'])).code).toBe(2)
    expect((await runCli(['import', DSH, '--model', 'gpt-5.4'])).code).toBe(2)
  })
})

const SAMPLES = resolve('..', 'shared', 'fixtures', 'transcripts')

describe.skipIf(!existsSync(SAMPLES))('cachelab import --as on every real sample', () => {
  it.each(['anthropic', 'openai-chat', 'openai-responses'])(
    'replays every DSH request as %s without a refusal, and leaves the bodiless formats out',
    async (provider) => {
      const { code, records } = await importAs([SAMPLES], ['--lenient', '--as', provider])
      expect(code).toBe(0)
      const dsh = records.filter((record) => record.format === 'dsh')
      expect(dsh.reduce((sum, record) => sum + Number(record.requests), 0)).toBeGreaterThan(20)
      for (const record of records) expect(record.rejected).toBe('0')
      for (const record of records.filter((record) => record.format !== 'dsh'))
        expect(record.requests).toBe('0')
    },
  )
})
