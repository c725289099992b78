// The providers' cache diagnostics through `cachelab/msw`, as a harness that parses them tests itself
// without a key: Anthropic's `diagnostics` and OpenAI Responses' `prompt_cache_diagnostics`, asked with
// the official SDKs at their default base URLs, streamed and not, in the shapes the providers document.

import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { fillerText } from '../harness/filler.ts'
import { startCachelabMocks } from './msw.ts'

const mocks = startCachelabMocks()
afterAll(() => mocks.close())
beforeEach(() => {
  mocks.recorder.clear()
  mocks.context.reset()
})

const system = fillerText(3000, 'msw-diagnostics-system')
const anthropic = new Anthropic({ apiKey: 'test-key', maxRetries: 0 })
const openai = new OpenAI({ apiKey: 'test-key', maxRetries: 0 })

/** One Messages request, streamed or not, as the SDK's final Message. */
async function message(stream: boolean, params: Anthropic.MessageCreateParamsNonStreaming) {
  if (!stream) return anthropic.messages.create(params)
  return anthropic.messages.stream(params).finalMessage()
}

describe.each([false, true])('Anthropic cache diagnostics through cachelab/msw (streamed: %s)', (stream) => {
  it('answers null on the first turn and an append, then the system prompt that changed, then an unknown id', async () => {
    const messages: Anthropic.MessageParam[] = []
    const ask = async (systemText: string, previous: string | null) => {
      messages.push({ role: 'user', content: fillerText(200, `question-${messages.length}`) })
      const reply = await message(stream, {
        model: 'claude-sonnet-4-6',
        max_tokens: 64,
        system: systemText,
        messages,
        cache_control: { type: 'ephemeral' },
        diagnostics: { previous_message_id: previous },
      })
      messages.push({ role: 'assistant', content: reply.content })
      return reply
    }
    const first = await ask(system, null)
    expect(first.diagnostics).toBeNull()
    const second = await ask(system, first.id)
    expect(second.diagnostics).toBeNull()
    expect(second.usage.cache_read_input_tokens).toBeGreaterThan(3000)
    const third = await ask(`Today is 2026-12-07. ${system}`, second.id)
    const reason = third.diagnostics?.cache_miss_reason
    expect(reason?.type).toBe('system_changed')
    // What the second request left cached, none of which the third could read.
    expect(reason !== null && reason !== undefined && 'cache_missed_input_tokens' in reason).toBe(true)
    expect((reason as Anthropic.CacheMissSystemChanged).cache_missed_input_tokens).toBeGreaterThan(3000)
    expect(third.usage.cache_read_input_tokens).toBe(0)
    const fourth = await ask(system, 'msg_never_sent')
    expect(fourth.diagnostics).toEqual({ cache_miss_reason: { type: 'previous_message_not_found' } })
  })

  it('keeps no fingerprint of a request without the object, and sends diagnostics: null unasked', async () => {
    const params = (previous?: string): Anthropic.MessageCreateParamsNonStreaming => ({
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      system,
      messages: [{ role: 'user', content: 'Hello.' }],
      ...(previous !== undefined ? { diagnostics: { previous_message_id: previous } } : {}),
    })
    const unasked = await message(stream, params())
    expect(unasked.diagnostics).toBeNull()
    const next = await message(stream, params(unasked.id))
    expect(next.diagnostics).toEqual({ cache_miss_reason: { type: 'previous_message_not_found' } })
  })
})

/** The Responses fields the installed SDK does not declare yet. */
interface Diagnosed {
  id: string
  prompt_cache_diagnostics?: unknown
  usage?: OpenAI.Responses.ResponseUsage | null
}

/** One Responses request, streamed (read from `response.completed`) or not. */
async function respond(stream: boolean, body: Record<string, unknown>): Promise<Diagnosed> {
  if (!stream)
    return (await openai.responses.create(
      body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming,
    )) as unknown as Diagnosed
  const events = await openai.responses.create({
    ...body,
    stream: true,
  } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming)
  let completed: Diagnosed | undefined
  for await (const event of events)
    if (event.type === 'response.completed') completed = event.response as unknown as Diagnosed
  if (completed === undefined) throw new Error('no response.completed')
  return completed
}

describe.each([false, true])(
  'OpenAI prompt cache diagnostics through cachelab/msw (streamed: %s)',
  (stream) => {
    const body = (tool: string, compared?: string) => ({
      model: 'gpt-5.6-sol',
      instructions: system,
      input: 'Reply with exactly OK.',
      tools: [{ type: 'function', name: tool, parameters: { type: 'object', properties: {} } }],
      ...(compared !== undefined ? { prompt_cache_options: { comparison_response_id: compared } } : {}),
    })

    it("answers the guide's example: a renamed tool is a cache_miss, tools_changed, with its token counts", async () => {
      const first = await respond(stream, body('get_time'))
      expect(first.prompt_cache_diagnostics).toBeUndefined()
      const same = await respond(stream, body('get_time', first.id))
      expect(same.prompt_cache_diagnostics).toEqual({ type: 'cache_hit' })
      const second = await respond(stream, body('get_date', first.id))
      expect(second.prompt_cache_diagnostics).toEqual({
        type: 'cache_miss',
        reason: 'tools_changed',
        cache_missed_tokens: expect.any(Number),
        comparison_reusable_tokens: expect.any(Number),
      })
      const counts = second.prompt_cache_diagnostics as {
        cache_missed_tokens: number
        comparison_reusable_tokens: number
      }
      expect(counts.comparison_reusable_tokens).toBeGreaterThan(3000)
      expect(counts.cache_missed_tokens).toBe(counts.comparison_reusable_tokens)
      expect(second.usage?.input_tokens_details.cached_tokens).toBe(0)
      const unknown = await respond(stream, body('get_time', 'resp_never_sent'))
      expect(unknown.prompt_cache_diagnostics).toEqual({ type: 'comparison_response_not_found' })
    })

    it('refuses the comparison on a model before GPT-5.6, which takes no prompt_cache_options', async () => {
      const refused = respond(stream, { ...body('get_time', 'resp_1'), model: 'gpt-5.4' })
      await expect(refused).rejects.toMatchObject({
        status: 400,
        error: { code: 'unsupported_parameter', param: 'prompt_cache_options' },
      })
    })
  },
)
