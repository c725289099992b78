import { describe, expect, it } from 'vitest'
import { cline } from './cline.ts'

const tools = ['read_files', 'run_commands', 'ask_question', 'spawn_agent'].map((name) => ({
  name,
  input_schema: { type: 'object' },
}))

describe("Cline's port", () => {
  it('knows Cline by its tools, its own turns by its system prompt, a subagent by another', () => {
    const lead = {
      system: [{ type: 'text', text: 'You are Cline, an AI coding agent. …' }],
      tools,
      messages: [],
    }
    expect(cline.read({ api: 'anthropic-messages', body: lead, headers: {} })).toEqual({
      agent: 'cline',
      kind: 'main',
    })
    const spawned = { system: [{ type: 'text', text: 'You list files.' }], tools, messages: [] }
    expect(cline.read({ api: 'anthropic-messages', body: spawned, headers: {} })).toEqual({
      agent: 'cline',
      kind: 'subagent',
    })
    const chat = {
      messages: [{ role: 'system', content: 'You are Cline, an AI coding agent.' }],
      tools: tools.map(({ name }) => ({ type: 'function', function: { name, parameters: {} } })),
    }
    expect(cline.read({ api: 'openai-chat', body: chat, headers: {} })?.kind).toBe('main')
  })

  it('does not read another client, whatever its system prompt says', () => {
    const other = { system: 'You are Cline, an AI coding agent.', tools: tools.slice(0, 2), messages: [] }
    expect(cline.read({ api: 'anthropic-messages', body: other, headers: {} })).toBeUndefined()
  })
})
