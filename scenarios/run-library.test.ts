// The library-loop runner with the official SDKs' reference loop, and with loops that misbehave on
// purpose: rows come from what the provider served, refusals carry the API's reason, what a library
// reports is kept beside the wire, and what a loop cannot express is listed.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { aiSdkModule, LIBRARY_LOOPS, loadLibrary } from '../harness/loops/libraries/index.ts'
import { sdkLoop } from '../harness/loops/libraries/sdk.ts'
import type { LibraryLoop, LibrarySession } from '../harness/loops/libraries/types.ts'
import { type LoopbackServer, startLoopback } from '../providers/mock/loopback.ts'
import { appendOnly } from './append-only.ts'
import { promptChange } from './prompt-change.ts'
import { runLibrarySession } from './run-library.ts'
import type { Scenario } from './types.ts'

let server: LoopbackServer
beforeAll(async () => {
  server = await startLoopback({ upstream: 'sim', port: 0 })
})
afterAll(async () => {
  await server.close()
})

function plan(scenario: Scenario, provider: 'anthropic' | 'openai-chat' | 'deepseek') {
  const variant = scenario.variants[0]
  if (variant === undefined) throw new Error(`${scenario.name} has no variant`)
  return { scenario, variant, provider }
}

describe('the reference loop on the official SDKs', () => {
  it('runs every scripted step of append-only on Anthropic, each warm request reading what the previous one wrote', async () => {
    const result = await runLibrarySession(plan(appendOnly, 'anthropic'), {
      runId: 'test',
      server,
      loop: sdkLoop(),
    })
    const scripted = appendOnly.script.flatMap((action) => (action.kind === 'turn' ? action.steps : []))
    expect(result.rows).toHaveLength(scripted.length)
    expect(result.errors).toEqual([])
    expect(result.rows.every((row) => row.loop === 'sdk')).toBe(true)
    for (const [index, row] of result.rows.entries()) {
      if (index === 0) continue
      const previous = result.rows[index - 1]
      expect(row.cacheReadTokens).toBe((previous?.cacheReadTokens ?? 0) + (previous?.cacheWriteTokens ?? 0))
    }
    expect(result.rows.some((row) => row.breakCause !== undefined)).toBe(false)
  })

  it('reports the wire usage the SDK read back, request by request', async () => {
    const result = await runLibrarySession(plan(appendOnly, 'openai-chat'), {
      runId: 'test',
      server,
      loop: sdkLoop(),
    })
    for (const request of result.requests) {
      expect(request.reported?.cacheRead).toBe(request.wire?.cacheRead)
      expect(request.reported?.input).toBe(request.wire?.input)
    }
  })

  it.each(['openai-chat', 'openai-responses'] as const)(
    'reads the cache writes GPT-5.6 reports on %s, as the wire has them',
    async (provider) => {
      const result = await runLibrarySession(
        { ...plan(appendOnly, 'openai-chat'), provider, model: 'gpt-5.6-sol' },
        { runId: 'test', server, loop: sdkLoop() },
      )
      expect(result.requests[0]?.wire?.cacheWrite).toBeGreaterThan(0)
      for (const request of result.requests)
        expect(request.reported?.cacheWrite).toBe(request.wire?.cacheWrite)
    },
  )

  it('puts the prompt change at the system prompt and names the script event behind it', async () => {
    const result = await runLibrarySession(plan(promptChange, 'anthropic'), {
      runId: 'test',
      server,
      loop: sdkLoop(),
    })
    const breaks = result.rows.flatMap((row, index) =>
      row.breakCause === undefined ? [] : [{ row, event: result.breakEventTypes[index] }],
    )
    expect(breaks.map(({ row }) => `${row.turn}.${row.step} ${row.breakNode} ${row.breakCause}`)).toEqual([
      '5.1 system[0] system-replace',
    ])
    expect(breaks[0]?.event).toBe('script/set-system')
  })

  it('passes DeepSeek its reasoning back, so thinking-mode tool calls are accepted', async () => {
    const result = await runLibrarySession(plan(appendOnly, 'deepseek'), {
      runId: 'test',
      server,
      loop: sdkLoop(),
    })
    expect(result.errors).toEqual([])
    expect(result.requests.every((request) => request.status === 200)).toBe(true)
  })
})

/** A loop whose every turn sends one Chat Completions request with a role DeepSeek refuses. */
function developerRoleLoop(): LibraryLoop {
  return {
    name: 'pi-ai',
    providers: ['deepseek'],
    caching: () => 'none',
    async open(options): Promise<LibrarySession> {
      return {
        setSystem: () => undefined,
        setTools: () => undefined,
        async turn(user) {
          const response = await options.transport.fetch(`${options.transport.baseURL}/chat/completions`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${options.transport.apiKey}`,
            },
            body: JSON.stringify({
              model: options.model,
              messages: [
                { role: 'developer', content: options.system },
                { role: 'user', content: user },
              ],
            }),
          })
          return response.ok ? { reported: [undefined] } : { reported: [], error: `${response.status}` }
        },
      }
    },
  }
}

describe('a loop the API refuses', () => {
  it('rows every refused request as failed, with the API’s reason and the turn it stopped', async () => {
    const result = await runLibrarySession(plan(appendOnly, 'deepseek'), {
      runId: 'test',
      server,
      loop: developerRoleLoop(),
    })
    const turns = appendOnly.script.filter((action) => action.kind === 'turn').length
    expect(result.requests).toHaveLength(turns)
    expect(result.requests.every((request) => request.status === 400)).toBe(true)
    expect(result.requests[0]?.refusal).toMatch(/developer/)
    expect(result.rows.every((row) => !row.ok)).toBe(true)
    expect(result.errors.map((error) => error.turn)).toEqual(
      Array.from({ length: turns }, (_, index) => index + 1),
    )
  })
})

describe('loading a library loop', () => {
  it('names the packages and the npm command when a library is not installed', async () => {
    const loaded = await loadLibrary(aiSdkModule(6), (name) => (name === 'ai' ? undefined : '1.0.0'))
    expect(loaded.status).toBe('missing')
    if (loaded.status !== 'missing') return
    expect(loaded.reason).toBe('not installed: ai')
    expect(loaded.install).toBe(
      'npm i -D ai@6.0.325 @ai-sdk/anthropic@3.0.140 @ai-sdk/openai@3.0.141 @ai-sdk/deepseek@2.0.69',
    )
  })

  it('reads the versions that ran off the installed packages', async () => {
    const loaded = await loadLibrary(LIBRARY_LOOPS.sdk)
    expect(loaded.status === 'loaded' ? loaded.versions : loaded).toEqual({
      '@anthropic-ai/sdk': '1.14.0',
      openai: '6.49.0',
    })
  })
})
