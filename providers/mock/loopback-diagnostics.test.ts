// The providers' cache diagnostics over `cachelab serve`'s HTTP: the same answers as in process
// (reports/msw-diagnostics.test.ts), through the official SDKs pointed at the loopback server.

import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { type LoopbackServer, startLoopback } from './loopback.ts'

const system = fillerText(3000, 'serve-diagnostics-system')
let server: LoopbackServer

beforeAll(async () => {
  server = await startLoopback({ upstream: 'sim', port: 0 })
})
afterAll(async () => server.close())

describe('cache diagnostics from cachelab serve', () => {
  it("answers Anthropic's diagnostics on a streamed message_start: the tools that changed", async () => {
    const client = new Anthropic({ apiKey: 'test-key', baseURL: server.baseURLs.anthropic, maxRetries: 0 })
    const tool = (name: string): Anthropic.Tool => ({
      name,
      description: 'Reads a file.',
      input_schema: { type: 'object', properties: {} },
    })
    const ask = (tools: Anthropic.Tool[], previous: string | null) =>
      client.messages
        .stream({
          model: 'claude-sonnet-4-6',
          max_tokens: 64,
          tools,
          system,
          messages: [{ role: 'user', content: 'Which files changed?' }],
          cache_control: { type: 'ephemeral' },
          diagnostics: { previous_message_id: previous },
        })
        .finalMessage()
    const first = await ask([tool('read_file')], null)
    expect(first.diagnostics).toBeNull()
    const second = await ask([tool('read_file'), tool('grep')], first.id)
    expect(second.diagnostics?.cache_miss_reason).toEqual({
      type: 'tools_changed',
      cache_missed_input_tokens: expect.any(Number),
    })
  })

  it("answers OpenAI's prompt_cache_diagnostics on a Response: the instructions that changed are input", async () => {
    const client = new OpenAI({ apiKey: 'test-key', baseURL: server.baseURLs.openai, maxRetries: 0 })
    const create = (instructions: string, compared?: string) =>
      client.responses.create({
        model: 'gpt-5.6-sol',
        instructions,
        input: 'Reply with exactly OK.',
        ...(compared !== undefined ? { prompt_cache_options: { comparison_response_id: compared } } : {}),
      } as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming) as unknown as Promise<{
        id: string
        prompt_cache_diagnostics?: unknown
      }>
    const first = await create(system)
    const second = await create(`Now: 12:00. ${system}`, first.id)
    expect(second.prompt_cache_diagnostics).toMatchObject({ type: 'cache_miss', reason: 'input_changed' })
  })
})
