import { describe, expect, it } from 'vitest'
import { pi } from './pi.ts'

describe("pi's port", () => {
  it('knows pi by its system prompt, its session by the Responses headers, compaction by its prompt', () => {
    const system = [
      {
        type: 'text',
        text: 'You are an expert coding assistant operating inside pi, a coding agent harness.',
      },
    ]
    expect(pi.read({ api: 'anthropic-messages', body: { system, messages: [] }, headers: {} })).toEqual({
      agent: 'pi',
      kind: 'main',
    })
    const responses = { input: [{ role: 'developer', content: system[0]?.text }], prompt_cache_key: 'ses' }
    expect(
      pi.read({ api: 'openai-responses', body: responses, headers: { session_id: 'ses' } })?.session,
    ).toBe('ses')
    const summary = {
      system: [{ type: 'text', text: 'You are a context summarization assistant.' }],
      messages: [],
    }
    expect(pi.read({ api: 'anthropic-messages', body: summary, headers: {} })).toMatchObject({
      kind: 'compaction',
    })
  })

  it('does not read another client', () => {
    expect(
      pi.read({ api: 'anthropic-messages', body: { system: 'You help.', messages: [] }, headers: {} }),
    ).toBeUndefined()
  })
})
