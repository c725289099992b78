// `cachelab calibrate` end to end: the project's own DSH fixture for the files it writes; the real samples
// in ../shared (when present) for the acceptance counts.

import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { calibrateFiles } from '../reports/calibrate-files.ts'
import { runCli } from './testing.ts'

const SAMPLES = resolve('..', 'shared', 'fixtures', 'transcripts')

describe('cachelab calibrate', () => {
  it('writes the steps and the models as CSV and prints a summary per model', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-calibrate-'))
    const result = await runCli([
      'calibrate',
      'reports/observed/transcripts/testdata/dsh-session.jsonl',
      '--out',
      out,
    ])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('deepseek deepseek-v4-flash:')
    expect(result.stdout).toMatch(/agreement \(\d+ predicted steps\)/)
    // The token fit reads the replayed requests' bodies (their message counts): kept past the reading.
    expect(result.stdout).toContain('tokens: recorded ≈ 465 + 0.237 × simulated (3 requests)')
    const steps = readFileSync(join(out, 'calibration.csv'), 'utf8').split('\n')
    expect(steps[0]).toBe(
      'provider,model,session,source,turn,step,gap_s,recorded_input,recorded_read,recorded_write,predicted_read,basis,placement,agreement,note',
    )
    expect(steps.some((row) => row.includes(',simulator,'))).toBe(true)
    expect(readFileSync(join(out, 'calibration-models.csv'), 'utf8')).toContain('deepseek,deepseek-v4-flash,')
  })

  it('refuses a call without files (exit 2)', async () => {
    const result = await runCli(['calibrate'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('calibrate needs at least one transcript, keyed run or live capture')
  })

  it.skipIf(!existsSync(SAMPLES))(
    'predicts every step of the two live DSH logs exactly on the 128 grid',
    async () => {
      const { models } = await calibrateFiles(
        [
          join(SAMPLES, 'dsh-deepseek-ai-goal-multi-turn-actions.jsonl'),
          join(SAMPLES, 'dsh-deepseek-ai-permission-policy-context.jsonl'),
        ],
        { format: 'auto', lenient: false },
      )
      expect(models[0]?.tally).toMatchObject({ exact: 17, 'within-unit': 0, off: 0 })
      expect(models[0]?.placements).toEqual({ 'output-end': 13, 'input-end': 4 })
    },
  )

  it.skipIf(!existsSync(SAMPLES))('reproduces the OpenAI counts of the Codex rollouts', async () => {
    const { models } = await calibrateFiles(
      ['01997e76', '01997ea4', '01998190'].map((id) => join(SAMPLES, `codex-jnarowski-rollout-${id}.jsonl`)),
      { format: 'auto', lenient: false },
    )
    const codex = models.find((entry) => entry.model === 'gpt-5-codex')
    expect(codex).toMatchObject({ nonZeroReads: 235, readsOn128: 235, granularity: 128 })
    expect(codex?.sessions.map((session) => session.belowPreviousPrefix).sort((a, b) => a - b)).toEqual([
      2, 9, 45,
    ])
    const ratios = codex?.sessions.map((session) => session.hitRatio) ?? []
    expect(Math.min(...ratios)).toBeCloseTo(0.804, 3)
    expect(Math.max(...ratios)).toBeCloseTo(0.973, 3)
  })
})
