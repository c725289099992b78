import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { SeriesStartPolicy } from '../harness/policies.ts'
import { findModel } from '../providers/catalog.ts'
import { readDsh } from './observed/transcripts/dsh.ts'
import type { ObservedRequest } from './observed/transcripts/types.ts'
import { ObservedRowBuilder } from './observed-rows.ts'
import { type PolicyStep, PolicyTally, recordedPolicyOf } from './series-policy.ts'

const testdata = (name: string) =>
  fileURLToPath(new URL(`./observed/transcripts/testdata/${name}`, import.meta.url))
const CONSOLIDATE = testdata('dsh-c-consolidate.jsonl')
const KEEP_LIVE = testdata('dsh-c-keep-live.jsonl')

async function read(file: string, policy: SeriesStartPolicy): Promise<ObservedRequest[]> {
  const requests: ObservedRequest[] = []
  for await (const request of readDsh(file, { lenient: false, onProblem: () => {}, seriesStart: policy }))
    requests.push(request)
  return requests
}

/** One file re-derived under `policy`, its rows made as the import makes them (one builder per session). */
async function tallied(files: readonly string[], policy: SeriesStartPolicy): Promise<PolicyTally> {
  const tally = new PolicyTally(policy)
  for (const file of files) {
    const requests = await read(file, policy)
    const builders = new Map<string, ObservedRowBuilder>()
    const entries = requests.map((request) => {
      const builder = builders.get(request.session) ?? new ObservedRowBuilder({ runId: 'test' })
      builders.set(request.session, builder)
      return builder.add(request)
    })
    tally.add(requests, entries)
  }
  return tally
}

/** Everything before the pruned tool result: turn 2's first request, which ends before the call to it. */
async function beforePrunedNode(file: string): Promise<number> {
  const requests = await read(file, 'consolidate')
  return requests.find((request) => request.turn === 2 && request.step === 1)?.usage.input ?? 0
}

/** Tokens as DeepSeek V4 reads them: rounded down to 128. */
const onGrid = (tokens: number) => Math.floor(tokens / 128) * 128

const seriesStep = (steps: readonly PolicyStep[]) => steps.find((step) => step.turn === 4) as PolicyStep

describe('DSH sessions re-derived under a series-start policy and replayed', () => {
  it('keep-live on a consolidating log reads every token before the pruned node where the recorded replay read almost nothing', async () => {
    const tally = await tallied([CONSOLIDATE], 'keep-live')
    const step = seriesStep(tally.stepsResult())
    expect(step.seriesStart).toBe(true)
    expect(step.replayed.read).toBeLessThan(step.replayed.input * 0.01)
    // On DeepSeek V4's 128-token read grid.
    expect(step.rederived.read).toBeGreaterThanOrEqual(onGrid(await beforePrunedNode(CONSOLIDATE)))
    const [session] = tally.result()
    expect(session).toMatchObject({
      recordedPolicy: 'consolidate',
      requests: 8,
      notApplicable: [],
      rejected: 0,
      firstDifference: { source: `${CONSOLIDATE}:40`, turn: 4, step: 1, node: 'messages[0]' },
    })
  })

  it('consolidate on a keep-live log loses what the recorded replay read at the series start', async () => {
    const tally = await tallied([KEEP_LIVE], 'consolidate')
    const step = seriesStep(tally.stepsResult())
    expect(step.replayed.read).toBeGreaterThanOrEqual(onGrid(await beforePrunedNode(KEEP_LIVE)))
    expect(step.rederived.read).toBeLessThan(step.rederived.input * 0.01)
    expect(tally.result()[0]?.recordedPolicy).toBe('keep-live')
  })

  it('reproduces the recorded replay exactly under the policy the log was recorded with', async () => {
    for (const [file, policy] of [
      [CONSOLIDATE, 'consolidate'],
      [KEEP_LIVE, 'keep-live'],
    ] as const) {
      const tally = await tallied([file], policy)
      for (const step of tally.stepsResult()) expect(step.rederived).toEqual(step.replayed)
      const [session] = tally.result()
      expect(session?.rederived).toEqual(session?.replayed)
      expect(session?.firstDifference).toBeUndefined()
    }
  })

  it("prices each side from the catalog's DeepSeek prices, and sums the steps into the session", async () => {
    const tally = await tallied([CONSOLIDATE], 'keep-live')
    const prices = findModel('deepseek', 'deepseek-flash')?.prices
    const requests = await read(CONSOLIDATE, 'keep-live')
    const steps = tally.stepsResult()
    steps.forEach((step, index) => {
      const output = requests[index]?.usage.output ?? 0
      const expected =
        (step.rederived.uncached * (prices?.input ?? 0) +
          step.rederived.read * (prices?.cacheRead ?? 0) +
          output * (prices?.output ?? 0)) /
        1_000_000
      expect(step.rederived.costUsd).toBeCloseTo(expected, 12)
    })
    const [session] = tally.result()
    expect(session?.rederived.costUsd).toBeCloseTo(
      steps.reduce((sum, step) => sum + step.rederived.costUsd, 0),
      12,
    )
    expect(session?.rederived.read).toBe(steps.reduce((sum, step) => sum + step.rederived.read, 0))
  })

  it('lists a generation B session and a summarizer call as not applicable, with the reason, and replays none', async () => {
    const tally = await tallied([testdata('dsh-session.jsonl')], 'keep-live')
    expect(tally.stepsResult()).toEqual([])
    const sessions = tally.result()
    expect(sessions.map((session) => [session.recordedPolicy, session.requests])).toEqual([
      ['not-applicable', 0],
      ['not-applicable', 0],
    ])
    expect(sessions[0]?.notApplicable[0]?.reason).toMatch(/generation B/)
    expect(sessions[1]?.notApplicable).toEqual([
      { source: `${testdata('dsh-session.jsonl')}:43`, reason: expect.stringMatching(/summarizer/) },
    ])
  })
})

describe("a session's recorded policy", () => {
  it('is what its telling series starts show, mixed when they disagree, indistinguishable without one', () => {
    expect(recordedPolicyOf(new Set(['either', 'consolidate']))).toBe('consolidate')
    expect(recordedPolicyOf(new Set(['keep-live']))).toBe('keep-live')
    expect(recordedPolicyOf(new Set(['keep-live', 'consolidate']))).toBe('mixed')
    expect(recordedPolicyOf(new Set(['either']))).toBe('indistinguishable')
    expect(recordedPolicyOf(new Set())).toBe('indistinguishable')
    expect(recordedPolicyOf(new Set(['neither']))).toBe('unknown')
  })
})
