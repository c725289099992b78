import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { MockCall } from '../../../providers/mock/context.ts'
import { type LoopbackServer, startLoopback } from '../../../providers/mock/loopback.ts'
import { firstDifference } from '../../../reports/loops.ts'
import { summarize } from '../../../reports/summary.ts'
import type { StepRow } from '../../../reports/types.ts'
import { findScenario } from '../../../scenarios/index.ts'
import { type LibrarySessionResult, runLibrarySession } from '../../../scenarios/run-library.ts'
import type { ProviderId } from '../../types.ts'
import {
  AI_SDK_PACKAGES,
  aiSdkChoice,
  aiSdkMajor,
  installedVersion,
  LIBRARY_LOOPS,
  loadLibrary,
  npmName,
} from './index.ts'
import { sdkLoop } from './sdk.ts'
import type { LibraryLoop } from './types.ts'

type Body = Record<string, unknown>

let server: LoopbackServer
/** The request bodies the mock saw, in order, for the session running now. */
const bodies: Body[] = []
/** What the AI SDK warned, through its documented `AI_SDK_LOG_WARNINGS` hook (kept off the console). */
const warnings: string[] = []
const globals = globalThis as { AI_SDK_LOG_WARNINGS?: unknown }
const warningLogger = globals.AI_SDK_LOG_WARNINGS

beforeAll(async () => {
  server = await startLoopback({ upstream: 'sim', port: 0 })
  const context = server.context
  if (context === undefined) throw new Error('no simulator behind the loopback server')
  const record = context.record.bind(context)
  context.record = (call: MockCall) => {
    bodies.push(call.body)
    record(call)
  }
  globals.AI_SDK_LOG_WARNINGS = (options: { warnings: Array<{ type: string; details?: string }> }) => {
    for (const warning of options.warnings) warnings.push(warning.details ?? warning.type)
  }
})

afterAll(async () => {
  globals.AI_SDK_LOG_WARNINGS = warningLogger
  await server.close()
})

interface Run {
  result: LibrarySessionResult
  bodies: Body[]
}

async function run(loop: LibraryLoop, scenarioName: string, provider: ProviderId): Promise<Run> {
  const scenario = findScenario(scenarioName)
  const variant = scenario?.variants[0]
  if (scenario === undefined || variant === undefined) throw new Error(`no scenario ${scenarioName}`)
  bodies.length = 0
  const result = await runLibrarySession({ scenario, variant, provider }, { runId: 'test', server, loop })
  return { result, bodies: [...bodies] }
}

/** ai 7 runs where Node is 22+ and its aliased packages are installed (not in CI, which installs on Node 20). */
const onAiSdk7 = aiSdkMajor(process.versions.node, (name) => installedVersion(name) !== undefined) === 7
const loaded = await loadLibrary(LIBRARY_LOOPS['ai-sdk'])
if (loaded.status !== 'loaded') throw new Error(`the ai-sdk loop did not load: ${loaded.reason}`)
const aiSdk = loaded.loop
const reference = sdkLoop()
const PROVIDERS: readonly ProviderId[] = ['anthropic', 'openai-chat', 'openai-responses', 'deepseek']
const SCENARIOS = ['append-only', 'prompt-change', 'tool-schema-change'] as const

const cacheMarks = (body: Body) => (JSON.stringify(body).match(/"cache_control"/g) ?? []).length
const warm = (rows: StepRow[]) => summarize(rows)[0]?.hitRatioWarm ?? 0
const cost = (rows: StepRow[]) => rows.reduce((sum, row) => sum + row.costUsd, 0)
/** Tokens the library's requests read less than the reference loop's, request by request. */
const lostVersusReference = (library: StepRow[], baseline: StepRow[]) =>
  library.reduce(
    (sum, row, index) => sum + Math.max(0, (baseline[index]?.cacheReadTokens ?? 0) - row.cacheReadTokens),
    0,
  )
/** The messages of a Chat Completions or Anthropic body. */
const messagesOf = (body: Body) => (body.messages ?? body.input) as Array<Record<string, unknown>>
/** The user messages that open a turn (not tool results), as Anthropic receives them. */
const userTurns = (body: Body) =>
  messagesOf(body).filter(
    (message) =>
      message.role === 'user' &&
      !(Array.isArray(message.content) && message.content.some((part) => part.type === 'tool_result')),
  )

describe('the ai-sdk loop’s major', () => {
  it('runs ai 6 on Node 20 and ai 7 on Node 22+ where it is installed, reported by the npm names', () => {
    const major = onAiSdk7 ? 7 : 6
    expect(Object.keys(loaded.versions)).toEqual([
      'ai',
      '@ai-sdk/anthropic',
      '@ai-sdk/openai',
      '@ai-sdk/deepseek',
    ])
    expect(loaded.versions.ai?.split('.')[0]).toBe(String(major))
    expect(loaded.versions['@ai-sdk/anthropic']?.split('.')[0]).toBe(String(major - 3))
  })

  it.runIf(onAiSdk7)('reads ai 7’s versions off its aliased packages', () => {
    expect(LIBRARY_LOOPS['ai-sdk'].packages).toEqual(Object.values(AI_SDK_PACKAGES[7]))
    expect(loaded.versions).toEqual({
      ai: '7.0.173',
      '@ai-sdk/anthropic': '4.0.105',
      '@ai-sdk/openai': '4.0.118',
      '@ai-sdk/deepseek': '3.0.56',
    })
  })

  it('names ai 7’s aliased packages by the npm names their pins point at', () => {
    expect(Object.values(AI_SDK_PACKAGES[7]).map((name) => npmName(name))).toEqual(
      Object.values(AI_SDK_PACKAGES[6]),
    )
  })

  it('runs ai 7 installed under its own name (a user’s project), on the npm names', () => {
    const userProject = (name: string) =>
      ({
        ai: '7.0.173',
        '@ai-sdk/anthropic': '4.0.105',
        '@ai-sdk/openai': '4.0.118',
        '@ai-sdk/deepseek': '3.0.56',
      })[name]
    expect(aiSdkChoice('22.12.0', userProject)).toEqual({ major: 7, packages: AI_SDK_PACKAGES[6] })
    expect(
      aiSdkChoice('22.12.0', (name) => ({ ai: '6.0.325', '@ai-sdk/anthropic': '3.0.140' })[name]),
    ).toEqual({
      major: 6,
      packages: AI_SDK_PACKAGES[6],
    })
    expect(aiSdkChoice('24.21.0', () => '7.0.173')).toEqual({ major: 7, packages: AI_SDK_PACKAGES[7] })
  })

  it('keeps ai 6 on Node 20 even when ai 7’s packages are there', () => {
    expect(aiSdkMajor('20.19.5', () => true)).toBe(6)
    expect(aiSdkMajor('22.12.0', () => true)).toBe(7)
    expect(aiSdkMajor('24.21.0', (name) => name !== 'ai-sdk-deepseek-3')).toBe(6)
  })
})

describe.each(PROVIDERS)('the ai-sdk loop on %s', (provider) => {
  it.each(SCENARIOS)(
    'runs %s as the reference does, request for request, and reports the wire’s usage',
    async (name) => {
      const library = await run(aiSdk, name, provider)
      const baseline = await run(reference, name, provider)
      const { rows, requests, errors } = library.result
      expect(errors).toEqual([])
      expect(requests.filter((request) => request.refusal !== undefined)).toEqual([])
      expect(rows).toHaveLength(baseline.result.rows.length)
      // The AI SDK reads its usage fields as the wire means them: every input token, reads and writes.
      for (const request of requests) {
        expect(request.reported?.input).toBe(request.wire?.input)
        expect(request.reported?.cacheRead).toBe(request.wire?.cacheRead)
        if (provider === 'anthropic') expect(request.reported?.cacheWrite).toBe(request.wire?.cacheWrite)
      }
    },
  )

  it('reads a growing prefix through append-only', async () => {
    const { rows } = (await run(aiSdk, 'append-only', provider)).result
    const reads = rows.map((row) => row.cacheReadTokens)
    expect(reads.at(-1)).toBeGreaterThan(reads[1] ?? Number.POSITIVE_INFINITY)
    expect(rows.filter((row) => row.breakCause !== undefined)).toEqual([])
  })

  it('breaks at the system prompt when it changes', async () => {
    const { rows } = (await run(aiSdk, 'prompt-change', provider)).result
    const node =
      provider === 'anthropic' ? 'system[0]' : provider === 'openai-responses' ? 'input[0]' : 'messages[0]'
    expect(
      rows
        .filter((row) => row.breakCause !== undefined)
        .map((row) => [row.turn, row.breakCause, row.breakNode]),
    ).toEqual([[5, 'system-replace', node]])
  })
})

describe('the ai-sdk loop on anthropic: the docs’ cache marks beyond four', () => {
  it('drops the newest marks on the wire, warns, and freezes the cache read while the reference’s grows', async () => {
    warnings.length = 0
    const library = await run(aiSdk, 'prompt-change', 'anthropic')
    const baseline = await run(reference, 'prompt-change', 'anthropic')
    const { rows } = library.result
    // The app marks the system prompt and every turn's user message: from turn 4 on that is five or more.
    for (const [index, body] of library.bodies.entries()) {
      const turn = rows[index]?.turn ?? 0
      expect(cacheMarks(body)).toBe(Math.min(4, 1 + turn))
      const newest = userTurns(body).at(-1)
      expect(JSON.stringify(newest).includes('cache_control')).toBe(turn < 4)
    }
    expect(warnings.some((text) => /Maximum 4 cache breakpoints exceeded \(found 5\)/.test(text))).toBe(true)
    // The loop tells the report what it asked for and what the AI SDK warned, request by request.
    for (const [index, request] of library.result.requests.entries()) {
      const turn = rows[index]?.turn ?? 0
      expect(request.reported?.requestedBreakpoints).toBe(1 + turn)
      expect((request.reported?.warnings ?? []).length > 0).toBe(turn >= 4)
    }

    // With its newest marks dropped, the request reads up to turn 3's user message and no further.
    const trimmed = rows.filter((row) => row.turn >= 4)
    const afterChange = trimmed.filter((row) => row.turn >= 5 && !(row.turn === 5 && row.step === 1))
    expect(new Set(trimmed.filter((row) => row.turn === 4).map((row) => row.cacheReadTokens)).size).toBe(1)
    expect(new Set(afterChange.map((row) => row.cacheReadTokens)).size).toBe(1)
    expect(afterChange.every((row) => row.cacheWriteTokens === 0)).toBe(true)
    // The cost, against the reference loop's automatic caching on the same requests.
    const baselineTrimmed = baseline.result.rows.filter((row) => row.turn >= 4)
    expect(lostVersusReference(trimmed, baselineTrimmed)).toBeGreaterThan(15_000)
    expect(warm(rows)).toBeLessThan(warm(baseline.result.rows) - 0.1)
    expect(cost(rows)).toBeGreaterThan(cost(baseline.result.rows) * 1.4)
  })

  it('first differs from the reference at the first user message, a marked text block where the SDK sends a string', async () => {
    const library = await run(aiSdk, 'append-only', 'anthropic')
    const baseline = await run(reference, 'append-only', 'anthropic')
    const [first, reference0] = [library.result.digests[0], baseline.result.digests[0]]
    if (first === undefined || reference0 === undefined) throw new Error('no first request')
    expect(firstDifference(reference0, first)).toBe('messages[0].0')
  })
})

describe('the ai-sdk loop on openai', () => {
  it.each(['openai-chat', 'openai-responses'] as const)(
    'sends %s the session’s prompt_cache_key and the system prompt as a developer message',
    async (provider) => {
      const { bodies: sent } = await run(aiSdk, 'append-only', provider)
      expect(sent.every((body) => body.prompt_cache_key === `append-only.default.${provider}`)).toBe(true)
      expect(sent.every((body) => messagesOf(body)[0]?.role === 'developer')).toBe(true)
    },
  )
})

describe('the ai-sdk loop on deepseek', () => {
  it('passes the reasoning back with every tool call in thinking mode, so nothing is refused', async () => {
    const { bodies: sent, result } = await run(aiSdk, 'append-only', 'deepseek')
    const toolCalling = sent.flatMap((body) =>
      messagesOf(body).filter((message) => message.tool_calls !== undefined),
    )
    expect(toolCalling.length).toBeGreaterThan(0)
    expect(toolCalling.every((message) => typeof message.reasoning_content === 'string')).toBe(true)
    expect(result.requests.every((request) => request.refusal === undefined)).toBe(true)
  })
})

describe('the ai-sdk loop after a tool is removed', () => {
  it('answers a call to the removed tool with its own error instead of running it', async () => {
    const { bodies: sent } = await run(aiSdk, 'tool-schema-change', 'deepseek')
    const toolResults = sent.flatMap((body) => messagesOf(body).filter((message) => message.role === 'tool'))
    expect(toolResults.some((message) => String(message.content).includes("unavailable tool 'grep'"))).toBe(
      true,
    )
  })
})
