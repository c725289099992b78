import { describe, expect, it } from 'vitest'
import { jsonOutputOf, lastUserText, systemText } from './wire-text.ts'

describe('the structured output a request asks for', () => {
  const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] }

  it('is a JSON schema, or any JSON object, in each API’s own field', () => {
    expect(
      jsonOutputOf('anthropic-messages', { output_config: { format: { type: 'json_schema', schema } } }),
    ).toEqual({ schema })
    expect(jsonOutputOf('anthropic-messages', { output_config: { effort: 'medium' } })).toBeUndefined()
    expect(
      jsonOutputOf('openai-chat', {
        response_format: { type: 'json_schema', json_schema: { name: 'title', schema } },
      }),
    ).toEqual({ schema })
    expect(jsonOutputOf('deepseek-chat', { response_format: { type: 'json_object' } })).toEqual({})
    expect(jsonOutputOf('openai-chat', { response_format: { type: 'text' } })).toBeUndefined()
    expect(
      jsonOutputOf('openai-responses', { text: { format: { type: 'json_schema', name: 't', schema } } }),
    ).toEqual({ schema })
    expect(jsonOutputOf('openai-responses', { text: { format: { type: 'json_object' } } })).toEqual({})
    expect(
      jsonOutputOf('gemini-generate', {
        generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema },
      }),
    ).toEqual({ schema })
    expect(
      jsonOutputOf('gemini-generate', {
        generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT' } },
      }),
    ).toEqual({ schema: { type: 'OBJECT' } })
    expect(jsonOutputOf('gemini-generate', { generationConfig: { responseSchema: schema } })).toBeUndefined()
    expect(
      jsonOutputOf('bedrock-converse', {
        outputConfig: {
          textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(schema) } } },
        },
      }),
    ).toEqual({ schema })
  })
})

describe('the texts a replies rule can match', () => {
  it('read the system prompt in each API’s place, system and developer messages included', () => {
    expect(
      systemText('anthropic-messages', {
        system: [
          { type: 'text', text: 'You are Claude Code.' },
          { type: 'text', text: 'Be brief.' },
        ],
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    ).toBe('You are Claude Code.\nBe brief.')
    expect(systemText('anthropic-messages', { system: 'One string.', messages: [] })).toBe('One string.')
    expect(
      systemText('openai-chat', {
        messages: [
          { role: 'system', content: 'Generate a title.' },
          { role: 'developer', content: [{ type: 'text', text: 'Five words.' }] },
          { role: 'user', content: 'Fix the bug' },
        ],
      }),
    ).toBe('Generate a title.\nFive words.')
    expect(
      systemText('openai-responses', {
        instructions: 'You are Codex.',
        input: [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Sandbox.' }] }],
      }),
    ).toBe('You are Codex.\nSandbox.')
    expect(
      systemText('gemini-generate', {
        systemInstruction: { parts: [{ text: 'You are the router.' }] },
        contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      }),
    ).toBe('You are the router.')
    expect(
      systemText('bedrock-converse', {
        system: [{ text: 'You are on Bedrock.' }, { cachePoint: { type: 'default' } }],
        messages: [],
      }),
    ).toBe('You are on Bedrock.')
  })

  it('read the latest user message that is not only tool results, its text blocks joined', () => {
    expect(
      lastUserText({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: '<reminder>' },
              { type: 'text', text: 'Open a.' },
            ],
          },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a' }] },
        ],
      }),
    ).toBe('<reminder>\nOpen a.')
    expect(lastUserText({ input: 'Hello' })).toBe('Hello')
    expect(
      lastUserText({
        contents: [
          { role: 'user', parts: [{ text: 'First' }] },
          { role: 'model', parts: [{ text: 'OK.' }] },
          { role: 'user', parts: [{ text: 'Second' }] },
        ],
      }),
    ).toBe('Second')
    expect(lastUserText({ messages: [{ role: 'user', content: [{ text: 'On Bedrock' }] }] })).toBe(
      'On Bedrock',
    )
    expect(lastUserText({ messages: [] })).toBe('')
  })
})

describe('what the user typed', () => {
  it("leaves out the agent's notes beside the prompt", () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text: '<system-reminder>\nAvailable agent types: a subagent…\n</system-reminder>',
            },
            { type: 'text', text: 'Summarize again' },
          ],
        },
      ],
    }
    expect(lastUserText(body)).toBe('Summarize again')
  })
})
