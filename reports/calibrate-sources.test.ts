// Keyed runs and live captures as calibration input: the prediction the simulator made when each request
// was sent is the step's prediction; a simulated run or capture (the simulator's own usage) is refused.

import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Usage } from '../harness/types.ts'
import type { CapturedExchange } from '../providers/wire/exchange.ts'
import { calibrateFiles } from './calibrate-files.ts'
import { sourceOf } from './calibrate-sources.ts'
import { CaptureWriter } from './observed/capture/store.ts'

const HEADER =
  'run_id,scenario,variant,provider,model,route,turn,step,attempt,header_reason,starts_series,input_tokens,cache_read_tokens,cache_write_tokens,uncached_tokens,output_tokens,hit_ratio,ideal_cache_read_tokens,lost_tokens,break_node,break_event_seq,break_cause,cost_usd,virtual_time_s,latency_ms,provider_cause,provider_lost_tokens,provider_lost_usd,predicted_cache_read_tokens,predicted_cache_write_tokens,loop'

/** A steps.csv row of a live run: the provider's usage, and the simulator's predicted read (empty: none). */
function row(turn: number, input: number, read: number, predicted: number | ''): string {
  return `live-1,append-only,default,openai-chat,gpt-5.4,unsupported,${turn},1,0,,false,${input},${read},0,${input - read},100,,,,,,,0.01,${turn * 30},500,,0,0,${predicted},${predicted === '' ? '' : 0},model`
}

const options = { format: 'auto' as const, lenient: false }

describe('calibrate over keyed runs', () => {
  it('sets each step against the read the simulator predicted when the request was sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-keyed-'))
    writeFileSync(
      join(dir, 'steps.csv'),
      [
        HEADER,
        row(1, 5000, 0, 0),
        row(2, 5400, 4992, 4992),
        row(3, 5800, 5248, 5376),
        row(4, 6200, 1024, 5760),
        '',
      ].join('\n'),
    )
    expect(sourceOf(dir)).toEqual({ kind: 'keyed-run', file: join(dir, 'steps.csv') })
    const { models } = await calibrateFiles([dir], options)
    const [model] = models
    expect(model).toMatchObject({ provider: 'openai-chat', model: 'gpt-5.4', requests: 4 })
    expect(model?.tally).toMatchObject({ exact: 1, 'within-unit': 1, off: 1 })
    expect([...(model?.steps ?? [])].map((step) => step.basis)).toEqual(Array(3).fill('recorded-prediction'))
    expect([...(model?.steps ?? [])].map((step) => step.predictedRead)).toEqual([4992, 5376, 5760])
  })

  it('refuses a simulated run, whose usage is the simulator’s own', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cachelab-keyed-')), 'steps.csv')
    writeFileSync(file, [HEADER, row(1, 5000, 0, ''), row(2, 5400, 4992, ''), ''].join('\n'))
    await expect(calibrateFiles([file], options)).rejects.toThrow(/no row carries a prediction/)
  })
})

/** A captured exchange of a live capture: the provider's usage, the simulator's predicted read. */
function exchange(seq: number, read: number, predicted: number): CapturedExchange {
  const usage: Usage = {
    input: 9000,
    uncached: 9000 - read,
    cacheRead: read,
    cacheWrite: 0,
    output: 50,
    raw: {},
  }
  return {
    seq,
    session: 's-1',
    conversation: 's-1',
    kind: 'main',
    identity: 'header',
    time: new Date(Date.UTC(2026, 10, 30, 12, 0, seq * 10)).toISOString(),
    at: seq * 10,
    api: 'openai-responses',
    provider: 'openai-responses',
    model: 'gpt-5.4',
    stream: false,
    status: 200,
    latencyMs: 400,
    turn: seq,
    step: 1,
    attempt: 0,
    usage,
    simulation: {
      counts: {
        input: 9000,
        read: predicted,
        write: 0,
        write5m: 0,
        write1h: 0,
        uncached: 9000 - predicted,
        output: 50,
      },
      predicted: true,
    },
    digest: { segments: [], trailing: 0, total: 9000, items: [], config: {} },
  }
}

describe('calibrate over live captures', () => {
  it('takes each exchange’s predicted counts as the step’s prediction', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-capture-'))
    const writer = CaptureWriter.open(
      dir,
      { id: 'c-1', started: '2026-11-30T12:00:00Z', upstream: 'live', bodies: false },
      (error) => {
        throw error
      },
    )
    for (const [seq, read, predicted] of [
      [1, 0, 0],
      [2, 8960, 8960],
      [3, 0, 8960],
    ] as const)
      writer.write(exchange(seq, read, predicted))
    const [model] = (await calibrateFiles([dir], options)).models
    expect(model?.tally).toMatchObject({ exact: 1, off: 1 })
    expect([...(model?.steps ?? [])][1]).toMatchObject({
      basis: 'recorded-prediction',
      predictedRead: 8960,
      recordedRead: 0,
    })
  })

  it('refuses a capture of the simulator', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-capture-'))
    CaptureWriter.open(
      dir,
      { id: 'c-2', started: '2026-11-30T12:00:00Z', upstream: 'sim', bodies: false },
      () => undefined,
    )
    await expect(calibrateFiles([dir], options)).rejects.toThrow(/a capture of the simulator/)
  })
})
