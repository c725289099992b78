import { describe, expect, it } from 'vitest'
import { run } from '../bin/run.ts'
import { CachelabError } from '../harness/errors.ts'

const missing = (specifier: string) =>
  Object.assign(new Error(`Cannot find package '${specifier}'`), { code: 'ERR_MODULE_NOT_FOUND' })

describe("DSH's published loop driven by the scenario scripts", async () => {
  const result = await run({
    scenarios: ['append-only', 'prompt-change', 'series-start-unchanged', 'resume'],
    providers: ['deepseek'],
    variants: ['default', 'unsupported', 'keep-live', 'unchanged', 'prompt-drift'],
    loops: ['model', 'dsh'],
  })
  const dshRows = (scenario: string, variant: string) =>
    result.rows.filter((row) => row.loop === 'dsh' && row.scenario === scenario && row.variant === variant)
  const comparison = (scenario: string, variant: string) =>
    result.comparisons.find((entry) => entry.scenario === scenario && entry.variant === variant)

  it('writes rows produced by DSH, labelled with its loop, beside the model loop rows', () => {
    expect(dshRows('append-only', 'default')).toHaveLength(13)
    expect(result.rows.filter((row) => row.loop === 'model' && row.scenario === 'append-only')).toHaveLength(
      13,
    )
  })

  it('sends append-only requests that agree with the model loop node for node', () => {
    const steps = comparison('append-only', 'default')?.steps ?? []
    expect(steps).toHaveLength(13)
    expect(steps.every((step) => step.agreement === 'same')).toBe(true)
  })

  it('attributes the prompt change to the request header DSH wrote for it', () => {
    const broken = dshRows('prompt-change', 'unsupported').filter((row) => row.breakCause !== undefined)
    expect(broken.map((row) => [row.turn, row.step, row.headerReason, row.breakCause])).toEqual([
      [5, 1, 'change', 'system-replace'],
    ])
    const step = comparison('prompt-change', 'unsupported')?.steps.find((entry) => entry.turn === 5)
    expect(step?.dsh?.breakEventType).toBe('request/header')
    expect(step?.dsh?.breakEventSeq).toBe(broken[0]?.breakEventSeq)
  })

  it('resumes from its session store with a resume header, and a drifted prompt breaks there', () => {
    expect(dshRows('resume', 'unchanged').find((row) => row.turn === 5 && row.step === 1)?.headerReason).toBe(
      'resume',
    )
    expect(dshRows('resume', 'unchanged').some((row) => row.breakCause !== undefined)).toBe(false)
    const drift = dshRows('resume', 'prompt-drift').filter((row) => row.breakCause !== undefined)
    expect(drift.map((row) => [row.turn, row.headerReason, row.breakCause])).toEqual([
      [5, 'resume', 'system-replace'],
    ])
  })

  it("rewrites the head at seed 004's prompt change where the model's keep-live appends, and reports the prune n/a", () => {
    const first = comparison('series-start-unchanged', 'keep-live')?.steps.find(
      (step) => step.agreement !== 'same',
    )
    expect([first?.turn, first?.step, first?.firstDifference]).toEqual([5, 1, 'messages[0]'])
    expect(
      result.inexpressible.filter((entry) => entry.sessionId === 'series-start-unchanged.keep-live.deepseek'),
    ).toEqual([expect.objectContaining({ action: 'prune', loop: 'dsh' })])
  })

  it('leaves the claims to the model loop rows', () => {
    expect(result.claims.every((claim) => claim.status !== 'fails')).toBe(true)
  })
})

describe('--loop dsh without the packages', () => {
  it('is a usage error naming the package to install', async () => {
    const failure = await run({
      scenarios: ['append-only'],
      providers: ['deepseek'],
      loops: ['dsh'],
      importer: async (specifier) => {
        throw missing(specifier)
      },
    }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(CachelabError)
    expect((failure as CachelabError).kind).toBe('usage')
    expect((failure as CachelabError).message).toMatch(/npm i @deepseek-ai\/dsh-agent-loop@0\.1\.0-rc\.8/)
  })
})
