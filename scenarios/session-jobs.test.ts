import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CachelabError } from '../harness/errors.ts'
import { SCENARIOS } from './index.ts'
import { type RunProgress, run } from './matrix.ts'
import { planMatrix } from './run.ts'
import {
  canTransfer,
  dispatchOrder,
  jobsFor,
  REQUESTS_PER_WORKER,
  requireJobs,
  scriptedRequests,
} from './session-jobs.ts'
import type { Scenario } from './types.ts'

const named = (name: string) => SCENARIOS.find((scenario) => scenario.name === name) as Scenario

/** Every file under `dir`, relative path → content. */
function filesOf(dir: string): Record<string, string> {
  const files: Record<string, string> = {}
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    files[path.slice(dir.length + 1)] = readFileSync(path, 'utf8')
  }
  return files
}

describe('a run spread over worker threads', () => {
  it('writes the same bytes with two workers as in process, and reports its progress', async () => {
    const scenarios = ['append-only', 'idle-ttl', 'flaky-provider']
    const serialDir = mkdtempSync(join(tmpdir(), 'cachelab-jobs-1-'))
    const parallelDir = mkdtempSync(join(tmpdir(), 'cachelab-jobs-2-'))
    const serial = await run({ scenarios, out: serialDir, jobs: 1 })
    const seen: RunProgress[] = []
    const parallel = await run({
      scenarios,
      out: parallelDir,
      jobs: 2,
      onProgress: (state) => seen.push(state),
    })

    expect(parallel.runId).toBe(serial.runId)
    expect(parallel.rows).toEqual(serial.rows)
    expect(parallel.failures).toEqual(serial.failures)
    const serialFiles = filesOf(serialDir)
    expect(Object.keys(serialFiles)).toContain('sessions/append-only.default.anthropic.jsonl')
    expect(filesOf(parallelDir)).toEqual(serialFiles)

    const last = seen.at(-1)
    expect(last).toMatchObject({ sessionsDone: last?.sessionsTotal, requests: serial.rows.length, jobs: 2 })
    expect(seen.some((state) => state.running.length === 2)).toBe(true)
  })

  it('fails with the first failing session in plan order, as a serial run does', async () => {
    // Time cannot run backwards: the first session fails after a whole conversation, the second at once,
    // so in two workers the second fails first.
    const failing = (name: string, seconds: number, before: Scenario['script']): Scenario => ({
      ...named('append-only'),
      name,
      providers: ['deepseek'],
      variants: [{ name: 'default', script: [...before, { kind: 'idle', seconds }] }],
    })
    const scenarios = [failing('first', -1, named('append-only').script), failing('second', -2, [])]
    const serial = await run({ scenarios, jobs: 1 }).catch((error: unknown) => error)
    const parallel = await run({ scenarios, jobs: 2 }).catch((error: unknown) => error)
    expect((serial as Error).message).toBe('cannot advance the clock by -1')
    expect((parallel as Error).message).toBe('cannot advance the clock by -1')
  })
})

describe('handing out sessions', () => {
  const { plans } = planMatrix([named('append-only'), named('long-session')], ['anthropic', 'deepseek'])

  it('counts the requests a script sends: one per step of every turn', () => {
    const long = plans.find((plan) => plan.scenario.name === 'long-session')
    expect(long === undefined ? 0 : scriptedRequests(long)).toBe(1440)
  })

  it('hands out the longest sessions first, plan order among equals', () => {
    expect(dispatchOrder(plans).map((index) => plans[index]?.scenario.name)).toEqual([
      'long-session',
      'long-session',
      'append-only',
      'append-only',
    ])
    expect(dispatchOrder(plans)).toEqual([2, 3, 0, 1])
  })

  it('keeps a small run in process by default and honours a number asked for, up to one per session', () => {
    const small = planMatrix([named('append-only')], ['anthropic']).plans
    expect(scriptedRequests(small[0] as (typeof small)[number])).toBeLessThan(REQUESTS_PER_WORKER)
    expect(jobsFor(small, undefined)).toBe(1)
    expect(jobsFor(small, 8)).toBe(1)
    expect(jobsFor(plans, 3)).toBe(3)
    expect(jobsFor(plans, 1)).toBe(1)
  })

  it('by default starts no more workers than the cores, nor than can finish before the longest session', () => {
    // Two 1,440-request sessions and two short ones: a third worker could not end the run sooner.
    expect(jobsFor(plans, undefined, 64)).toBe(3)
    expect(jobsFor(plans, undefined, 2)).toBe(2)
    const whole = planMatrix(SCENARIOS, ['anthropic', 'openai-chat', 'openai-responses', 'deepseek']).plans
    expect(jobsFor(whole, undefined, 64)).toBe(6)
  })

  it('refuses a number of jobs that is not a whole number from 1 up, quoting it', () => {
    expect(() => requireJobs(0)).toThrow(
      /--jobs takes a whole number of worker threads from 1 to 256, got "0"/,
    )
    expect(() => requireJobs(Number('99999999999999999999'), '99999999999999999999')).toThrow(
      /from 1 to 256, got "99999999999999999999"/,
    )
    expect(() => requireJobs(Number.NaN, 'two')).toThrow(/got "two"/)
    expect(() => requireJobs(1.5)).toThrow(CachelabError)
    expect(requireJobs(4)).toBe(4)
  })

  it('sends scenarios to workers without their claims, and not at all when they hold a function', () => {
    expect(canTransfer(plans)).toBe(true)
    const odd = { ...named('append-only'), name: 'odd', system: (() => 'text') as unknown as string }
    expect(canTransfer(planMatrix([odd], ['anthropic']).plans)).toBe(false)
  })
})
