import { describe, expect, it } from 'vitest'
import { declaredTools, outputCapOf, positionOf, reasonsOn, toolChoiceOf } from './conversation.ts'

const call = { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{}' } }

describe('the position of a request in its conversation', () => {
  it('counts user turns and the model answers since the latest one (Chat)', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Open a.' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: 'a' },
    ]
    expect(positionOf('openai-chat', { messages: messages.slice(0, 2) })).toEqual({
      turn: 1,
      step: 1,
      after: 'user',
    })
    expect(positionOf('openai-chat', { messages })).toEqual({ turn: 1, step: 2, after: 'tool-results' })
    const next = [...messages, { role: 'assistant', content: 'Done.' }, { role: 'user', content: 'And b?' }]
    expect(positionOf('openai-chat', { messages: next })).toEqual({ turn: 2, step: 1, after: 'user' })
  })

  it('does not count an Anthropic user message of tool results as a user turn', () => {
    const messages = [
      { role: 'user', content: 'Open a.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a' }] },
    ]
    expect(positionOf('anthropic-messages', { messages })).toEqual({
      turn: 1,
      step: 2,
      after: 'tool-results',
    })
  })

  it('counts one Responses answer for its reasoning, message and calls together', () => {
    const input = [
      { role: 'user', content: 'Open a and b.' },
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'function_call', call_id: 'c1', name: 'read_file', arguments: '{}' },
      { type: 'function_call', call_id: 'c2', name: 'read_file', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'a' },
      { type: 'function_call_output', call_id: 'c2', output: 'b' },
    ]
    expect(positionOf('openai-responses', { input })).toEqual({ turn: 1, step: 2, after: 'tool-results' })
    expect(positionOf('openai-responses', { input: 'Hello' })).toEqual({ turn: 1, step: 1, after: 'user' })
  })
})

describe('the tools a request declares', () => {
  it('are its function tools, deferred and server tools left out', () => {
    const schema = { type: 'object' }
    expect(
      declaredTools('openai-chat', {
        tools: [
          { type: 'function', function: { name: 'a', parameters: schema } },
          { type: 'function', function: { name: 'b' }, defer_loading: true },
        ],
      }),
    ).toEqual([{ name: 'a', schema }])
    expect(
      declaredTools('anthropic-messages', {
        tools: [
          { name: 'web_search', type: 'web_search_20250305' },
          { name: 'grep', input_schema: schema },
        ],
      }),
    ).toEqual([{ name: 'grep', schema }])
    expect(
      declaredTools('openai-responses', { tools: [{ type: 'function', name: 'c', parameters: schema }] }),
    ).toEqual([{ name: 'c', schema }])
  })

  it('on Responses, include the tools of namespaces and of additional_tools items, with their namespace', () => {
    const schema = { type: 'object', properties: { message: { type: 'string' } } }
    const fn = (name: string) => ({ type: 'function', name, parameters: schema })
    // Codex CLI 0.169's shape: no top-level tools, an `additional_tools` developer item of namespaces.
    const body = {
      input: [
        {
          type: 'additional_tools',
          role: 'developer',
          tools: [
            { type: 'namespace', name: 'functions', tools: [{ type: 'custom', name: 'exec' }, fn('wait')] },
            { type: 'namespace', name: 'collaboration', tools: [fn('spawn_agent'), fn('list_agents')] },
          ],
        },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'List the files.' }] },
      ],
    }
    expect(declaredTools('openai-responses', body)).toEqual([
      { name: 'wait', namespace: 'functions', schema },
      { name: 'spawn_agent', namespace: 'collaboration', schema },
      { name: 'list_agents', namespace: 'collaboration', schema },
    ])
    // A top-level namespace counts too; a tool declared again keeps its place with its latest schema.
    const later = { type: 'object', properties: {} }
    expect(
      declaredTools('openai-responses', {
        tools: [fn('exec_command'), { type: 'namespace', name: 'clock', tools: [fn('sleep')] }],
        input: [
          { type: 'additional_tools', tools: [{ ...fn('exec_command'), parameters: later }] },
          { role: 'user', content: 'Go.' },
        ],
      }),
    ).toEqual([
      { name: 'exec_command', schema: later },
      { name: 'sleep', namespace: 'clock', schema },
    ])
  })

  it('come with a tool choice in one vocabulary', () => {
    expect(toolChoiceOf('openai-chat', { tool_choice: 'required' })).toEqual({ kind: 'required' })
    expect(toolChoiceOf('anthropic-messages', { tool_choice: { type: 'any' } })).toEqual({ kind: 'required' })
    expect(toolChoiceOf('anthropic-messages', { tool_choice: { type: 'tool', name: 'grep' } })).toEqual({
      kind: 'named',
      name: 'grep',
    })
    expect(
      toolChoiceOf('openai-chat', { tool_choice: { type: 'function', function: { name: 'a' } } }),
    ).toEqual({
      kind: 'named',
      name: 'a',
    })
    expect(toolChoiceOf('openai-responses', { tool_choice: 'none' })).toEqual({ kind: 'none' })
    expect(toolChoiceOf('openai-responses', {})).toEqual({ kind: 'auto' })
  })
})

describe('the output cap and the reasoning switch of a request', () => {
  it('read each API’s own field', () => {
    expect(outputCapOf('openai-chat', { max_completion_tokens: 10, max_tokens: 99 })).toBe(10)
    expect(outputCapOf('openai-responses', { max_output_tokens: 5 })).toBe(5)
    expect(outputCapOf('anthropic-messages', { max_tokens: 0 })).toBe(0)
    expect(outputCapOf('deepseek-chat', {})).toBeUndefined()
  })

  it('turn reasoning on where the request asks, off where it says so, else as the model does', () => {
    expect(
      reasonsOn('anthropic-messages', { thinking: { type: 'enabled', budget_tokens: 1024 } }, 'on-request'),
    ).toBe(true)
    expect(reasonsOn('anthropic-messages', {}, 'on-request')).toBe(false)
    expect(reasonsOn('anthropic-messages', {}, 'by-default')).toBe(true)
    expect(reasonsOn('deepseek-chat', { thinking: { type: 'disabled' } }, 'by-default')).toBe(false)
    expect(reasonsOn('openai-chat', { reasoning_effort: 'low' }, 'on-request')).toBe(true)
    expect(reasonsOn('openai-responses', { reasoning: { effort: 'none' } }, 'on-request')).toBe(false)
    expect(reasonsOn('openai-chat', { reasoning_effort: 'high' }, 'never')).toBe(false)
  })
})
