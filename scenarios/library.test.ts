import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readSessionLog } from '../harness/store.ts'
import { PROVIDER_IDS, type ProviderId } from '../harness/types.ts'
import { type MockProviders, startMockProviders } from '../providers/index.ts'
import { rowProblems } from '../reports/sanity.ts'
import { summarize } from '../reports/summary.ts'
import type { StepRow } from '../reports/types.ts'
import { codingTurns } from './fixtures.ts'
import { findScenario } from './index.ts'
import { LONG_SESSION_TURNS } from './long-session.ts'
import { replayLongSession } from './long-session-replay.ts'
import { chooseModel } from './requirements.ts'
import { runSession } from './run.ts'
import type { Scenario } from './types.ts'

let mock: MockProviders

beforeAll(() => {
  mock = startMockProviders()
})
afterAll(() => mock.close())

async function run(scenarioName: string, variantName: string, provider: ProviderId, sessionsDir?: string) {
  const scenario = findScenario(scenarioName)
  const variant = scenario?.variants.find((candidate) => candidate.name === variantName)
  if (scenario === undefined || variant === undefined) throw new Error(`no ${scenarioName}/${variantName}`)
  // The model `cachelab run` picks for the scenario on this provider.
  const model = chooseModel(scenario, provider).entry.model
  const result = await runSession(
    { scenario, variant, provider, model },
    { runId: 'test', stream: false, mock, ...(sessionsDir ? { sessionsDir } : {}) },
  )
  // No row the provider's rules forbid (an ideal off the grid or below the minimum, a loss beyond the input).
  expect(rowProblems(result.rows)).toEqual([])
  return result
}

const warm = (rows: StepRow[]) => summarize(rows)[0]?.hitRatioWarm ?? 0
const breaks = (rows: StepRow[]) => rows.filter((row) => row.breakCause !== undefined)

describe('series-start-unchanged on deepseek (seed 004)', () => {
  it('keep-live reads every token before the pruned node; consolidate reads under 1% and names the system/message replacement', async () => {
    const keepLive = await run('series-start-unchanged', 'keep-live', 'deepseek')
    const consolidate = await run('series-start-unchanged', 'consolidate', 'deepseek')
    const afterPrune = (rows: StepRow[]) => rows.find((row) => row.headerReason === 'series') as StepRow
    const kept = afterPrune(keepLive.rows)
    const rewritten = afterPrune(consolidate.rows)
    // The pressure prune comes inside the paste's turn, at the pre-step of its second step (seed 004).
    expect([kept.turn, kept.step]).toEqual([10, 2])
    expect([rewritten.turn, rewritten.step]).toEqual([10, 2])

    const pruneSeq = keepLive.events.find((event) => event.type === 'compaction/prune')
    const prunedSeq = pruneSeq?.type === 'compaction/prune' ? pruneSeq.data.shadowedRange.start : -1
    const before = keepLive.events
      .filter((event) => event.type === 'assistant/message' && event.seq < prunedSeq)
      .at(-1)
    // Everything before the pruned node is the request that asked for it plus its answer.
    const beforeRow = keepLive.rows.find(
      (row) => row.turn === (before?.type === 'assistant/message' ? before.data.turn : -1) && row.step === 1,
    )
    // Read on DeepSeek V4's 128-token grid.
    const beforeTokens = (beforeRow?.inputTokens ?? Number.POSITIVE_INFINITY) + (beforeRow?.outputTokens ?? 0)
    expect(kept.cacheReadTokens).toBeGreaterThanOrEqual(Math.floor(beforeTokens / 128) * 128)
    expect(kept.breakCause).toBe('tool-result-prune')

    expect(rewritten.cacheReadTokens / rewritten.inputTokens).toBeLessThan(0.01)
    expect(rewritten.breakCause).toBe('system-replace')
    const event = consolidate.events[rewritten.breakEventSeq as number]
    expect(event?.type).toBe('system/message')
    expect(event?.surfaceOp).toMatchObject({ op: 'replace' })
  })
})

describe('prompt-change on deepseek', () => {
  it('appends a second system/message in-history; unsupported replaces node 0 and the next header is series', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prompt-change-'))
    await run('prompt-change', 'in-history', 'deepseek', dir)
    await run('prompt-change', 'unsupported', 'deepseek', dir)
    const inHistory = readSessionLog(join(dir, 'prompt-change.in-history.deepseek.jsonl')).events
    const unsupported = readSessionLog(join(dir, 'prompt-change.unsupported.deepseek.jsonl')).events
    const systems = (events: typeof inHistory) => events.filter((event) => event.type === 'system/message')
    expect(systems(inHistory).map((event) => event.surfaceOp)).toEqual(['append', 'append'])
    expect(systems(unsupported)[1]?.surfaceOp).toMatchObject({
      op: 'replace',
      startSeq: systems(unsupported)[0]?.seq,
    })
    const replaced = systems(unsupported)[1]?.seq as number
    const nextHeader = unsupported.find((event) => event.type === 'request/header' && event.seq > replaced)
    expect(nextHeader?.type === 'request/header' && nextHeader.data.reason).toBe('series')
  })
})

describe('the scenario library on openai-chat', () => {
  it('append-only keeps a warm hit ratio above 90% with no breaks', async () => {
    const { rows } = await run('append-only', 'default', 'openai-chat')
    expect(warm(rows)).toBeGreaterThan(0.9)
    expect(breaks(rows)).toHaveLength(0)
  })

  it('session-prefix: after-slot loses tokens on every step, frozen only at the resume that drifted', async () => {
    const afterSlot = await run('session-prefix', 'after-slot', 'openai-chat')
    const frozen = await run('session-prefix', 'frozen', 'openai-chat')
    expect(breaks(afterSlot.rows).every((row) => row.breakCause === 'after-slot')).toBe(true)
    expect(breaks(afterSlot.rows).length).toBeGreaterThan(20)
    expect(breaks(frozen.rows).map((row) => [row.headerReason, row.breakCause])).toEqual([
      ['resume', 'prefix-drift'],
    ])
  })

  it('compaction-summary: the own-prompt summarizer call is a compaction break and costs more than replaying', async () => {
    const replay = await run('compaction-summary', 'replay-prefix', 'openai-chat')
    const own = await run('compaction-summary', 'own-prompt', 'openai-chat')
    const summaryRow = (rows: StepRow[]) => rows.find((row) => row.step === 0) as StepRow
    expect(summaryRow(own.rows).breakCause).toBe('compaction-summary')
    expect(summaryRow(replay.rows).cacheReadTokens).toBeGreaterThan(summaryRow(own.rows).cacheReadTokens)
    expect(summaryRow(replay.rows).costUsd).toBeLessThan(summaryRow(own.rows).costUsd)
  })

  it('tool-result-prune: one break at the first pruned result, none without pruning', async () => {
    const none = await run('tool-result-prune', 'none', 'openai-chat')
    const pruned = await run('tool-result-prune', 'keep-middle', 'openai-chat')
    expect(breaks(none.rows)).toHaveLength(0)
    expect(breaks(pruned.rows).map((row) => row.breakCause)).toEqual(['tool-result-prune'])
  })

  it('idle-ttl: the 5-minute lifetime expires across the pause, 24h retention does not', async () => {
    const short = await run('idle-ttl', 'ttl-5m', 'openai-chat')
    const long = await run('idle-ttl', 'ttl-1h', 'openai-chat')
    expect(breaks(short.rows).map((row) => row.breakCause)).toEqual(['ttl-expired', 'ttl-expired'])
    expect(breaks(long.rows)).toHaveLength(0)
  })

  it('image-offload: per-request offloading breaks the prefix more often than quantized', async () => {
    const quantized = await run('image-offload', 'quantized', 'openai-chat')
    const perRequest = await run('image-offload', 'per-request', 'openai-chat')
    expect(breaks(perRequest.rows).length).toBeGreaterThan(breaks(quantized.rows).length)
    expect(breaks(quantized.rows).every((row) => row.breakCause === 'image-offload')).toBe(true)
    expect(warm(quantized.rows)).toBeGreaterThan(warm(perRequest.rows))
  })

  it('flaky-provider: each failed attempt is its own row and the session completes', async () => {
    const { rows, events } = await run('flaky-provider', 'default', 'openai-chat')
    expect(rows.filter((row) => !row.ok)).toHaveLength(3)
    expect(events.filter((event) => event.type === 'assistant/attempt')).toHaveLength(3)
    expect(
      events
        .filter((event) => event.type === 'turn/end')
        .every((event) => event.type === 'turn/end' && event.data.reason === 'completed'),
    ).toBe(true)
  })
})

describe('the scenario library on anthropic', () => {
  it('prompt-change: in-history keeps the cache; unsupported rewrites the head once', async () => {
    const inHistory = await run('prompt-change', 'in-history', 'anthropic')
    const unsupported = await run('prompt-change', 'unsupported', 'anthropic')
    expect(breaks(inHistory.rows)).toHaveLength(0)
    expect(breaks(unsupported.rows).map((row) => row.breakCause)).toEqual(['system-replace'])
    expect(warm(inHistory.rows)).toBeGreaterThan(warm(unsupported.rows))
  })

  it('tool-schema-change: declaring the set breaks at both changes, addition-only at the removal, in-history never', async () => {
    const unsupported = await run('tool-schema-change', 'unsupported', 'anthropic')
    const additionOnly = await run('tool-schema-change', 'addition-only', 'anthropic')
    const inHistory = await run('tool-schema-change', 'in-history', 'anthropic')
    expect(breaks(unsupported.rows).map((row) => row.breakCause)).toEqual(['tools-changed', 'tools-changed'])
    const [removal] = breaks(additionOnly.rows)
    expect(breaks(additionOnly.rows)).toHaveLength(1)
    expect(removal?.breakCause).toBe('tools-changed')
    expect(removal?.turn).toBe(breaks(unsupported.rows)[1]?.turn)
    expect(breaks(inHistory.rows)).toHaveLength(0)
  })

  it('parallel-tool-results: under the current rule every strategy reads across the fan-out; under the per-block rule one automatic breakpoint misses and rolling breakpoints lose least', async () => {
    const lost = async (variant: string) => {
      const { rows } = await run('parallel-tool-results', variant, 'anthropic')
      const missed = breaks(rows)
      expect(missed.every((row) => row.breakCause === 'lookback-miss')).toBe(true)
      // The request extended its predecessor, so the loss is the provider's reach, not the client's change.
      expect(rows.every((row) => row.lostTokens === 0)).toBe(true)
      return rows.reduce((sum, row) => sum + row.providerLostTokens, 0)
    }
    // A run of parallel tool calls (and one of their results) is one lookback position each.
    for (const variant of ['automatic', 'last-message', 'system-and-last', 'rolling'])
      expect(await lost(variant)).toBe(0)
    const automaticBlockRule = await lost('automatic-block-rule')
    const rollingBlockRule = await lost('rolling-block-rule')
    expect(rollingBlockRule).toBeGreaterThan(0)
    expect(automaticBlockRule).toBeGreaterThan(10 * rollingBlockRule)
  })
})

describe('resume across a restart', () => {
  it.each(PROVIDER_IDS)(
    'an unchanged header, or a changed temperature, keeps the cache on %s',
    async (provider) => {
      const unchanged = await run('resume', 'unchanged', provider)
      const temperature = await run('resume', 'temperature-change', provider)
      expect(unchanged.rows.some((row) => row.headerReason === 'resume')).toBe(true)
      expect(breaks(unchanged.rows)).toHaveLength(0)
      // Sampling settings are not part of any provider's cache key.
      expect(breaks(temperature.rows)).toHaveLength(0)
      expect(temperature.rows.map((row) => row.cacheReadTokens)).toEqual(
        unchanged.rows.map((row) => row.cacheReadTokens),
      )
    },
  )

  it('a drifted prompt rewrites the head where the route replaces it and is appended where it does not', async () => {
    const replaced = await run('resume', 'prompt-drift', 'anthropic')
    const appended = await run('resume', 'prompt-drift', 'deepseek')
    const [drift] = breaks(replaced.rows)
    expect(breaks(replaced.rows)).toHaveLength(1)
    expect(drift?.breakCause).toBe('system-replace')
    expect(drift?.turn).toBe(replaced.rows.find((row) => row.headerReason === 'resume')?.turn)
    expect(breaks(appended.rows)).toHaveLength(0)
  })
})

describe('break causes under a frozen session prefix', () => {
  /** A second catalog model per provider, for a model change (one that takes the temperature set before). */
  const OTHER_MODEL: Record<ProviderId, string> = {
    anthropic: 'claude-haiku-4-5',
    'openai-chat': 'gpt-5.4-mini',
    'openai-responses': 'gpt-5.4-mini',
    deepseek: 'deepseek-v4-pro',
    bedrock: 'anthropic.claude-haiku-4-5-20251001-v1:0',
    gemini: 'gemini-2.5-pro',
  }

  it.each(PROVIDER_IDS)(
    'names what changed in the header on %s: the prompt, a removed tool, the recomposed prefix, the model (which loses what staying would have read); a temperature breaks nothing',
    async (provider) => {
      const base = findScenario('session-prefix') as Scenario
      const turns = (from: number) => codingTurns(1, { seed: 'frozen-causes', resultTokens: 300, from })
      const script = (switchModel: boolean) => [
        ...turns(0),
        ...turns(1),
        { kind: 'set-system' as const, text: `${base.system}\n\nAnswer in French.` },
        ...turns(2),
        { kind: 'set-config' as const, config: { temperature: 0.2 } },
        ...turns(3),
        { kind: 'set-tools' as const, tools: base.tools.slice(0, -1) },
        ...turns(4),
        { kind: 'set-prefix-source' as const, text: 'Skills available in this workspace: none.' },
        { kind: 'restart' as const },
        ...turns(5),
        ...(switchModel ? [{ kind: 'set-config' as const, config: { model: OTHER_MODEL[provider] } }] : []),
        ...turns(6),
      ]
      const variant = {
        name: 'frozen',
        policies: { sessionPrefix: 'frozen', systemPrompt: 'header' },
      } as const
      const session = async (switchModel: boolean) =>
        (
          await runSession(
            { scenario: { ...base, script: script(switchModel) }, variant, provider },
            { runId: 'test', stream: false, mock },
          )
        ).rows
      const rows = await session(true)
      const stayed = await session(false)
      const firstStep = (turn: number, of = rows) =>
        of.find((row) => row.turn === turn && row.step === 1) as StepRow
      const systemNode =
        provider === 'anthropic' ||
        provider === 'openai-responses' ||
        provider === 'gemini' ||
        provider === 'bedrock'
          ? 'system[0]'
          : 'messages[0]'
      expect(breaks(rows).map((row) => [row.turn, row.headerReason, row.breakNode, row.breakCause])).toEqual([
        [3, 'change', systemNode, 'system-replace'],
        [5, 'change', `tools[${base.tools.length - 1}]`, 'tools-changed'],
        [6, 'resume', expect.any(String), 'prefix-drift'],
        [7, 'change', 'model', 'config-changed'],
      ])
      // The other model's cache is cold: the switch lost what staying on the first model read.
      expect(firstStep(7).lostTokens).toBeGreaterThan(0)
      expect(firstStep(7).idealCacheReadTokens).toBe(firstStep(7, stayed).cacheReadTokens)
      expect(firstStep(7).lostTokens).toBe(
        firstStep(7, stayed).cacheReadTokens - firstStep(7).cacheReadTokens,
      )
      expect(firstStep(4).headerReason).toBe('change')
      expect(firstStep(4).breakCause).toBeUndefined()
    },
  )
})

// 1,440 simulated requests each: room for a loaded 2-core machine (their speed is `npm run bench`'s, not this test's).
const LONG_SESSION_ROOM_MS = 300_000

describe('long-session', () => {
  it.each(PROVIDER_IDS)(
    'keeps a warm hit ratio above 0.99 over 720 turns on %s',
    async (provider) => {
      const rows = await replayLongSession(LONG_SESSION_TURNS, provider)
      expect(rows).toHaveLength(LONG_SESSION_TURNS * 2)
      expect(breaks(rows)).toHaveLength(0)
      expect(warm(rows)).toBeGreaterThan(0.99)
    },
    LONG_SESSION_ROOM_MS,
  )
})
