// Claude Code 2.1.328 against serve (its default memory budget), an idle gap made the documented way:
// `POST /cachelab/clock {"advance": 400}` between two prompts of one session. The clock's move removes
// the expired cache entries at once; the capture still names the first request after the gap
// `ttl-expired`, with the tokens the request before it left cached, as `run --agent --scenario idle` does.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StepRow } from '../../reports/types.ts'
import { type AgentBench, startAgentBench } from './bench.ts'

let bench: AgentBench
let main: StepRow[]
/** Virtual time just after the gap: the requests at or after it came after the clock moved. */
let gapEnd: number
let bytesAfterGap: number | undefined

beforeAll(async () => {
  bench = await startAgentBench()
  const session = await bench.session('claude-code')
  const steps = [
    { prompt: 'Say hello in one line.' },
    { prompt: 'Say it again, shorter.', continues: true },
    { prompt: 'And once more after a break.', continues: true },
  ]
  let sessionId = ''
  for (const [index, step] of steps.entries()) {
    if (index === 2) {
      gapEnd = (await bench.advance(400)).now
      bytesAfterGap = bench.server.context?.simulators.pruneStats.bytes
    }
    const outcome = await session.step(step)
    expect(outcome.code, outcome.stderr).toBe(0)
    sessionId = (JSON.parse(outcome.stdout) as { session_id: string }).session_id
  }
  main = bench.rows().filter((row) => row.variant === sessionId)
})

afterAll(() => bench?.close())

describe('Claude Code 2.1.328: an idle gap through the HTTP clock', () => {
  it('is served every request, none refused', () => {
    expect(bench.refusals()).toEqual([])
    expect(main.length).toBeGreaterThanOrEqual(3)
  })

  it("removes what expired when the clock moves (serve's budget), so nothing is read after the gap", () => {
    expect(bytesAfterGap).toBe(0)
    const after = main.find((row) => row.virtualTimeS >= gapEnd)
    expect(after?.cacheReadTokens).toBe(0)
  })

  it('names the first request after the gap ttl-expired, with the tokens the request before it left cached', () => {
    const index = main.findIndex((row) => row.virtualTimeS >= gapEnd)
    const before = main[index - 1]
    const after = main[index]
    const carried = (before?.cacheReadTokens ?? 0) + (before?.cacheWriteTokens ?? 0)
    expect(carried).toBeGreaterThan(5000)
    expect(after).toMatchObject({
      breakCause: 'ttl-expired',
      providerCause: 'ttl-expired',
      providerLostTokens: carried,
      lostTokens: 0,
    })
    expect(after?.providerLostUsd).toBeGreaterThan(0)
    // The gap is the only break: no request before it, and none after the first, is blamed.
    expect(main.filter((row) => row.breakCause !== undefined)).toEqual([after])
  })
})
