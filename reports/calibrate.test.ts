import { describe, expect, it } from 'vitest'
import type { ProviderId, Usage } from '../harness/types.ts'
import { addPairs, calibrate, commonGrid, fitTokens, floorTo, placementOf } from './calibrate.ts'
import { CalibrationRequests } from './calibrate-requests.ts'
import type { ReplayedRequest } from './observed/transcripts/replay.ts'
import type { ObservedRequest } from './observed/transcripts/types.ts'

const usage = (input: number, read: number, write = 0, output = 100): Usage => ({
  input,
  cacheRead: read,
  cacheWrite: write,
  uncached: input - read - write,
  output,
  raw: {},
})

let line = 0
function request(
  provider: ProviderId,
  model: string,
  session: string,
  seconds: number,
  used: Usage,
): ObservedRequest {
  line += 1
  return {
    format: provider === 'deepseek' ? 'dsh' : provider === 'anthropic' ? 'claude-code' : 'codex',
    source: `t.jsonl:${line}`,
    session,
    provider,
    model,
    time: new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)).toISOString(),
    usage: used,
    events: [],
  }
}

const noGrid = () => undefined

describe('calibration over recorded usage', () => {
  it('finds the grid every non-zero read sits on', () => {
    expect(commonGrid([2816, 8064, 9216])).toBe(128)
    expect(commonGrid([2816, 8064, 9216, 9984])).toBe(128)
    expect(commonGrid([1024, 2048])).toBe(1024)
    expect(commonGrid([87651])).toBe(1)
    expect(floorTo(9254, 128)).toBe(9216)
  })

  it('Anthropic: counts pairs within five minutes reading exactly the previous read + write, more, or less, and says why', () => {
    // Recorded vectors (Claude Code, claude-opus-4-5): 87,651 read + written, then 88,273 read 157 s later.
    const requests = [
      request('anthropic', 'claude-opus-4-5', 's', 0, usage(87_700, 80_000, 7_651)),
      request('anthropic', 'claude-opus-4-5', 's', 157, usage(88_400, 88_273, 13)),
      request('anthropic', 'claude-opus-4-5', 's', 160, usage(88_500, 88_286, 100)),
      request('anthropic', 'claude-opus-4-5', 's', 170, usage(88_600, 80_000, 8_000)),
      request('anthropic', 'claude-opus-4-5', 's', 900, usage(88_700, 0, 88_700)),
    ]
    const [model] = calibrate({ requests: CalibrationRequests.of(requests), catalogGrid: noGrid })
    expect(model?.pairs).toEqual({ total: 3, exact: 1, more: 1, less: 1 })
    expect(model?.tally).toMatchObject({ exact: 2, off: 2 })
    expect([...(model?.steps ?? [])][0]?.note).toContain('622 more than the previous read + write')
    // 730 s after a 5-minute write: the rule predicts nothing read, and nothing was.
    expect([...(model?.steps ?? [])][3]).toMatchObject({ predictedRead: 0, agreement: 'exact' })
    expect(model?.ttl).toMatchObject({ after5m: 1, readAfter5m: 0 })
  })

  it('Anthropic: counts the main sessions’ pairs apart from a sidechain’s', () => {
    const sidechain = (seconds: number, used: Usage) => ({
      ...request('anthropic', 'claude-opus-4-5', 's.sidechain-1', seconds, used),
      parent: 's',
    })
    const requests = [
      request('anthropic', 'claude-opus-4-5', 's', 0, usage(10_000, 0, 9_000)),
      request('anthropic', 'claude-opus-4-5', 's', 10, usage(10_500, 9_000, 1_400)),
      sidechain(12, usage(9_500, 9_000, 400)),
      sidechain(20, usage(9_900, 9_000, 800)),
    ]
    const [model] = calibrate({ requests: CalibrationRequests.of(requests), catalogGrid: noGrid })
    expect(model?.pairs).toEqual({ total: 2, exact: 1, more: 0, less: 1 })
    expect(model?.mainPairs).toEqual({ total: 1, exact: 1, more: 0, less: 0 })
    expect(
      addPairs([
        model?.mainPairs ?? { total: 0, exact: 0, more: 0, less: 0 },
        { total: 2, exact: 1, more: 1, less: 0 },
      ]),
    ).toEqual({
      total: 3,
      exact: 2,
      more: 1,
      less: 0,
    })
  })

  it('OpenAI: reads on the 128 grid, the hit per session, and the requests reading below the previous prompt', () => {
    const requests = [
      request('openai-responses', 'gpt-5-codex', 'a', 0, usage(21_090, 10_112)),
      request('openai-responses', 'gpt-5-codex', 'a', 5, usage(22_299, 20_992)),
      request('openai-responses', 'gpt-5-codex', 'a', 9, usage(32_596, 21_248)),
    ]
    const [model] = calibrate({ requests: CalibrationRequests.of(requests), catalogGrid: () => 128 })
    expect(model).toMatchObject({ nonZeroReads: 3, readsOn128: 3, granularity: 128 })
    expect(model?.sessions[0]?.belowPreviousPrefix).toBe(1)
    expect(model?.sessions[0]?.hitRatio).toBeCloseTo((10_112 + 20_992 + 21_248) / (21_090 + 22_299 + 32_596))
    expect([...(model?.steps ?? [])].map((step) => step.agreement)).toEqual(['exact', 'off'])
  })

  it('DeepSeek: places each read on a unit the simulator chose and predicts it from the recorded position on the grid', () => {
    // The live goal log's turn 1, steps 1–2 (recorded input, output, read), then a new turn that reads
    // the previous input on the grid.
    const requests = [
      request('deepseek', 'deepseek-v4-flash', 'g', 0, usage(7_893, 0, 0, 297)),
      request('deepseek', 'deepseek-v4-flash', 'g', 3, usage(8_427, 8_064, 0, 99)),
      request('deepseek', 'deepseek-v4-flash', 'g', 30, usage(8_800, 8_320, 0, 318)),
    ]
    const replay = (read: number, inputEnd: number, carry: number): ReplayedRequest => ({
      source: '',
      session: 'g',
      recorded: usage(0, 0),
      predicted: {
        input: inputEnd + 3,
        read,
        write: 0,
        write5m: 0,
        write1h: 0,
        uncached: inputEnd + 3 - read,
        output: 0,
      },
      inputEnd,
      carry,
    })
    const replayed = [replay(0, 249, 600), replay(600, 688, 800), replay(688, 900, 1000)]
    const [model] = calibrate({
      requests: CalibrationRequests.of(requests, { replayed }),
      catalogGrid: () => 128,
    })
    expect(
      [...(model?.steps ?? [])].map((step) => [step.placement, step.predictedRead, step.agreement]),
    ).toEqual([
      ['output-end', 8_064, 'exact'],
      ['input-end', 8_320, 'exact'],
    ])
    expect(model?.gridCandidates.map((candidate) => candidate.exact)).toEqual([0, 0, 2, 0])
  })

  it('tells which unit the simulator read', () => {
    expect(placementOf({ read: 0, inputEnd: 10, carry: 20 }, { read: 0, inputEnd: 10, carry: 20 })).toBe(
      'none',
    )
    expect(placementOf({ read: 20, inputEnd: 30, carry: 40 }, { read: 0, inputEnd: 10, carry: 20 })).toBe(
      'output-end',
    )
    expect(placementOf({ read: 10, inputEnd: 30, carry: 40 }, { read: 0, inputEnd: 10, carry: 20 })).toBe(
      'input-end',
    )
    expect(placementOf({ read: 5, inputEnd: 30, carry: 40 }, { read: 0, inputEnd: 10, carry: 20 })).toBe(
      'other',
    )
  })

  it('fits recorded input as a head plus a scaled simulated input', () => {
    const points = [100, 200, 300, 400].map((simulated, index) => ({
      recorded: 7_000 + 1.2 * simulated + 10 * (index * 2 + 3),
      simulated,
      messages: index * 2 + 3,
    }))
    const fit = fitTokens(points)
    expect(fit?.tokenScale).toBeGreaterThan(0)
    expect(fitTokens(points.slice(0, 2))).toMatchObject({ points: 2 })
    expect(fitTokens(points.slice(0, 1))).toBeUndefined()
  })
})
