import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CachelabError } from '../harness/errors.ts'
import type { DshArrival } from '../harness/loops/dsh/driver.ts'
import { DSH_PLUGINS } from '../harness/loops/dsh/modules.ts'
import { dshLogFile } from '../harness/loops/dsh/store.ts'
import type { StepScript } from '../harness/script.ts'
import { CODING_TOOLS } from './fixtures.ts'
import { SCENARIOS } from './index.ts'
import { run } from './matrix.ts'
import type { Scenario } from './types.ts'

const missing = (specifier: string) =>
  Object.assign(new Error(`Cannot find package '${specifier}'`), { code: 'ERR_MODULE_NOT_FOUND' })

describe("DSH's published loop driven by the scenario scripts", async () => {
  const result = await run({
    scenarios: [
      'append-only',
      'prompt-change',
      'series-start-unchanged',
      'resume',
      'tool-result-prune',
      'compaction-summary',
    ],
    providers: ['deepseek'],
    variants: [
      'default',
      'unsupported',
      'keep-live',
      'unchanged',
      'prompt-drift',
      'none',
      'keep-head',
      'replay-prefix',
    ],
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

  it("rewrites the head at seed 004's prompt change; with the script's pressure threshold DSH's own meter never prunes", () => {
    const first = comparison('series-start-unchanged', 'keep-live')?.steps.find(
      (step) => step.agreement !== 'same',
    )
    expect([first?.turn, first?.step, first?.firstDifference]).toEqual([5, 1, 'messages[0]'])
    const broken = dshRows('series-start-unchanged', 'keep-live').filter(
      (row) => row.breakCause !== undefined,
    )
    // DSH measures the context with its usage-anchored meter (23,002 where the model's estimate says
    // 27,542): below the script's 26,500, so its pre-step hook is installed but does not prune.
    expect(broken.map((row) => [row.turn, row.step, row.breakCause])).toEqual([[5, 1, 'system-replace']])
    expect(
      result.inexpressible.filter((entry) => entry.loop === 'dsh' && entry.action === 'pressure-prune'),
    ).toEqual([])
  })

  it("prunes under pressure in DSH's own pre-step hook, mid-turn, when its meter reaches the threshold", async () => {
    const seed004 = SCENARIOS.find((scenario) => scenario.name === 'series-start-unchanged') as Scenario
    const lowered: Scenario = {
      ...seed004,
      name: 'series-start-dsh-pressure',
      variants: seed004.variants.filter((variant) => variant.name === 'keep-live'),
      claims: [],
      script: seed004.script.map((action) =>
        action.kind === 'pressure-prune' ? { ...action, contextTokens: 21_000 } : action,
      ),
    }
    const pressured = await run({ scenarios: [lowered], providers: ['deepseek'], loops: ['dsh'] })
    const broken = pressured.rows.filter((row) => row.breakCause !== undefined)
    // 20,607 measured before 10.1, 23,002 before 10.2: the prune lands inside turn 10, at its second step.
    expect(broken.map((row) => [row.turn, row.step, row.breakCause])).toEqual([
      [5, 1, 'system-replace'],
      [10, 2, 'tool-result-prune'],
    ])
    // No series, no head rewrite: everything before the pruned result still reads.
    expect(broken[1]?.hitRatio).toBeGreaterThan(0.5)
  })

  it("prunes through DSH's pruner once, and every later request is smaller than without it", () => {
    const pruned = dshRows('tool-result-prune', 'keep-head')
    expect(pruned.filter((row) => row.breakCause !== undefined).map((row) => row.breakCause)).toEqual([
      'tool-result-prune',
    ])
    expect(dshRows('tool-result-prune', 'none').some((row) => row.breakCause !== undefined)).toBe(false)
    const unpruned = new Map(
      dshRows('tool-result-prune', 'none').map((row) => [`${row.turn}.${row.step}`, row]),
    )
    const after = pruned.filter((row) => row.turn >= 7)
    expect(after.length).toBeGreaterThan(0)
    expect(
      after.every((row) => row.inputTokens < (unpruned.get(`${row.turn}.${row.step}`)?.inputTokens ?? 0)),
    ).toBe(true)
  })

  it("compacts through DSH's manual compaction: its summarizer call is a step-0 row, the next request breaks on the summary", () => {
    const rows = dshRows('compaction-summary', 'replay-prefix')
    const summary = rows.filter((row) => row.step === 0)
    expect(summary).toHaveLength(1)
    expect(summary[0]?.cacheReadTokens).toBeGreaterThan(0)
    const after = rows.find((row) => row.turn === 9 && row.step === 1)
    expect(after?.breakCause).toBe('compaction-summary')
    const step = comparison('compaction-summary', 'replay-prefix')?.steps.find(
      (entry) => entry.turn === 9 && entry.step === 1,
    )
    expect(step?.dsh?.breakEventType).toBe('user/message')
  })

  it('leaves the claims to the model loop rows', () => {
    expect(result.claims.every((claim) => claim.status !== 'fails')).toBe(true)
  })
})

describe('DSH delivering input that arrives while a request is in flight', () => {
  const steered: StepScript & { arrivals: DshArrival[] } = {
    toolCalls: [{ name: 'grep', arguments: { pattern: 'TODO' }, result: 'src/a.ts:1: TODO' }],
    arrivals: [{ delivery: 'steer', text: 'Only look under src/core.' }],
  }
  const scenario: Scenario = {
    name: 'steer-arrival',
    demonstrates: 'a steer arriving during a tool step enters the next step of the turn',
    variants: [{ name: 'default' }],
    system: 'You are a coding agent.',
    tools: CODING_TOOLS,
    script: [
      { kind: 'turn', user: 'Find the TODOs.', steps: [steered, { text: 'Found one, in src/a.ts.' }] },
    ],
    claims: [],
  }

  it("steers through DSH's own steer: the user message joins the turn's next request", async () => {
    const sessions = mkdtempSync(join(tmpdir(), 'cachelab-dsh-steer-'))
    const result = await run({
      scenarios: [scenario],
      providers: ['deepseek'],
      loops: ['dsh'],
      out: sessions,
    })
    expect(result.rows.map((row) => [row.turn, row.step])).toEqual([
      [1, 1],
      [1, 2],
    ])
    const log = readFileSync(
      dshLogFile(join(sessions, 'sessions', 'dsh'), 'steer-arrival.default.deepseek'),
      'utf8',
    )
    const steering = log
      .split('\n')
      .filter((line) => line.includes('"type":"user/message"') && line.includes('Only look under src/core.'))
    expect(steering).toHaveLength(1)
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
    expect((failure as CachelabError).message).toMatch(/npm i -D @deepseek-ai\/dsh-agent-loop@0\.1\.0-rc\.8/)
  })

  it('runs without the compaction plugins, listing prune and compact n/a with the package to install', async () => {
    const plugins = new Set<string>(Object.values(DSH_PLUGINS))
    const result = await run({
      scenarios: ['tool-result-prune', 'compaction-summary'],
      providers: ['deepseek'],
      variants: ['keep-head', 'replay-prefix'],
      loops: ['dsh'],
      importer: async (specifier) => {
        if (plugins.has(specifier)) throw missing(specifier)
        return import(specifier)
      },
    })
    expect(result.inexpressible.map((entry) => [entry.action, entry.reason])).toEqual([
      [
        'prune',
        'tool-result pruning is a DSH plugin that is not installed: npm i -D @deepseek-ai/dsh-compaction-tool-result-pruner@0.1.0-rc.8',
      ],
      [
        'compact',
        'summary compaction is a DSH plugin that is not installed: npm i -D @deepseek-ai/dsh-compaction-basic@0.1.0-rc.8',
      ],
    ])
    expect(result.rows.some((row) => row.breakCause !== undefined)).toBe(false)
  })
})
