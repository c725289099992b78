import { describe, expect, it } from 'vitest'
import { summarize } from '../../../reports/summary.ts'
import type { StepRow } from '../../../reports/types.ts'
import type { LibrarySessionResult } from '../../../scenarios/run-library.ts'
import type { ProviderId } from '../../types.ts'
import { langchainLoop } from './langchain.ts'
import { sdkLoop } from './sdk.ts'
import { loopbackForTests, runScenario } from './testing.ts'
import type { LibraryLoop } from './types.ts'

const server = loopbackForTests()

const langchain = langchainLoop()

function run(
  scenarioName: string,
  provider: ProviderId,
  options: { loop?: LibraryLoop; model?: string } = {},
): Promise<LibrarySessionResult> {
  return runScenario(server(), options.loop ?? langchain, scenarioName, provider, options.model)
}

const at = (row: StepRow) => `${row.turn}.${row.step}`
const breaks = (rows: StepRow[]) =>
  rows.filter((row) => row.breakCause !== undefined).map((row) => [at(row), row.breakCause, row.breakNode])
const warm = (rows: StepRow[]) => summarize(rows)[0]?.hitRatioWarm ?? 0
const failedTurns = (rows: StepRow[]) => [...new Set(rows.filter((row) => !row.ok).map((row) => row.turn))]
const BREAKPOINT_LIMIT = /maximum of 4 blocks with cache_control/

describe('the langchain loop on anthropic: cache_control blocks kept in the history', () => {
  it('append-only: the fourth turn carries a fifth breakpoint and the API refuses it', async () => {
    const { rows, requests, errors } = await run('append-only', 'anthropic')
    expect(rows).toHaveLength(13)
    expect(failedTurns(rows)).toEqual([4])
    expect(requests.at(-1)?.status).toBe(400)
    expect(requests.at(-1)?.refusal).toMatch(BREAKPOINT_LIMIT)
    expect(requests.slice(0, -1).every((request) => request.refusal === undefined)).toBe(true)
    expect(errors).toEqual([{ turn: 4, message: expect.stringMatching(BREAKPOINT_LIMIT) }])
  })

  it('append-only: inside a turn the reads stay at the user message’s mark, where the sdk’s move on', async () => {
    const own = await run('append-only', 'anthropic')
    const reference = await run('append-only', 'anthropic', { loop: sdkLoop() })
    const firstTurn = (rows: StepRow[]) =>
      rows.filter((row) => row.turn === 1).map((row) => row.cacheReadTokens)
    const [, ...langchainReads] = firstTurn(own.rows)
    expect(new Set(langchainReads).size).toBe(1)
    const [, ...sdkReads] = firstTurn(reference.rows)
    expect(sdkReads.every((read, index) => index === 0 || read > (sdkReads[index - 1] ?? 0))).toBe(true)
    // The first turn's system-and-user prefix is read again in the second turn once its own mark is written.
    const turnTwo = own.rows.find((row) => at(row) === '2.2')
    expect(turnTwo?.cacheReadTokens).toBeGreaterThan(langchainReads[0] ?? 0)
    expect(warm(own.rows)).toBeLessThan(warm(reference.rows))
  })

  it('reports the wire’s reads and writes, its input summed over all three parts', async () => {
    const { requests } = await run('append-only', 'anthropic')
    const served = requests.filter((request) => request.wire !== undefined)
    expect(served.length).toBeGreaterThan(0)
    for (const { wire, reported } of served) {
      expect(reported?.cacheRead).toBe(wire?.cacheRead)
      expect(reported?.cacheWrite).toBe(wire?.cacheWrite)
      expect(reported?.input).toBe(wire?.input)
    }
  })

  it('prompt-change and tool-schema-change: every turn from the fourth is refused, so neither change is ever served', async () => {
    const prompt = await run('prompt-change', 'anthropic')
    const tools = await run('tool-schema-change', 'anthropic')
    expect(failedTurns(prompt.rows)).toEqual([4, 5, 6, 7])
    expect(failedTurns(tools.rows)).toEqual([4, 5, 6, 7, 8, 9])
    for (const { rows, requests } of [prompt, tools]) {
      expect(breaks(rows)).toEqual([])
      const refused = requests.filter((request) => request.refusal !== undefined)
      expect(refused.length).toBe(rows.filter((row) => !row.ok).length)
      expect(refused.every((request) => BREAKPOINT_LIMIT.test(request.refusal ?? ''))).toBe(true)
    }
  })
})

describe('the langchain loop on openai: promptCacheKey per session', () => {
  it('append-only on chat: warm reads above 90% and growing, the system prompt sent as a developer message', async () => {
    const { rows, digests, errors } = await run('append-only', 'openai-chat')
    expect(errors).toEqual([])
    expect(rows).toHaveLength(13)
    expect(breaks(rows)).toEqual([])
    expect(warm(rows)).toBeGreaterThan(0.9)
    expect(rows.at(-1)?.cacheReadTokens).toBeGreaterThan(rows[1]?.cacheReadTokens ?? 0)
    // gpt-5.x is a reasoning model to LangChain: `system` becomes `developer`, unlike the official SDK's loop.
    expect(digests[0]?.items[0]?.role).toBe('developer')
  })

  it('prompt-change breaks at the system node on chat and on responses', async () => {
    const chat = await run('prompt-change', 'openai-chat')
    const responses = await run('prompt-change', 'openai-responses')
    expect(breaks(chat.rows)).toEqual([['5.1', 'system-replace', 'messages[0]']])
    // Responses: the system prompt is an input item, not `instructions`.
    expect(breaks(responses.rows)).toEqual([['5.1', 'system-replace', 'input[0]']])
  })

  it('tool-schema-change breaks at each changed tool', async () => {
    const { rows } = await run('tool-schema-change', 'openai-chat')
    expect(rows).toHaveLength(27)
    expect(breaks(rows)).toEqual([
      ['4.1', 'tools-changed', 'tools[4]'],
      ['7.1', 'tools-changed', 'tools[1]'],
    ])
  })

  it('responses: store left to the API, the history resent whole, reads growing', async () => {
    const { rows, digests, errors } = await run('append-only', 'openai-responses')
    expect(errors).toEqual([])
    expect(warm(rows)).toBeGreaterThan(0.9)
    expect(digests[0]?.config.store).toBeUndefined()
  })

  it('on gpt-5.6 it reports the reads but not the writes the wire reports', async () => {
    const { requests } = await run('append-only', 'openai-chat', { model: 'gpt-5.6-sol' })
    const first = requests[0]
    expect(first?.wire?.cacheWrite).toBeGreaterThan(0)
    expect(first?.reported?.cacheWrite).toBeUndefined()
    for (const { wire, reported } of requests) expect(reported?.cacheRead).toBe(wire?.cacheRead)
  })
})

describe('the langchain loop on deepseek: ChatOpenAI on the compatible API', () => {
  it('append-only: reasoning_content is not passed back, so every tool round is refused from the first turn', async () => {
    const { rows, requests, errors } = await run('append-only', 'deepseek')
    expect(failedTurns(rows)).toEqual([1, 2, 3])
    expect(errors.map((error) => error.turn)).toEqual([1, 2, 3])
    const refused = requests.filter((request) => request.refusal !== undefined)
    expect(refused).toHaveLength(3)
    expect(refused.every((request) => /reasoning_content/.test(request.refusal ?? ''))).toBe(true)
    // The turn that had no tool call is the only one that completes.
    expect(rows.at(-1)).toMatchObject({ turn: 4, step: 1, ok: true })
  })

  it('prompt-change: the system change still breaks at messages[0] between the refusals', async () => {
    const { rows } = await run('prompt-change', 'deepseek')
    expect(breaks(rows).filter(([, cause]) => cause === 'system-replace')).toEqual([
      ['5.1', 'system-replace', 'messages[0]'],
    ])
  })

  it('tool-schema-change: the refusals leave the warm hit ratio below half the sdk’s', async () => {
    const own = await run('tool-schema-change', 'deepseek')
    const reference = await run('tool-schema-change', 'deepseek', { loop: sdkLoop() })
    expect(reference.errors).toEqual([])
    expect(own.errors.length).toBeGreaterThan(0)
    expect(warm(own.rows)).toBeLessThan(warm(reference.rows) / 2)
  })
})
