import { describe, expect, it } from 'vitest'
import { DshRequestBuilder, headerChanges, readHeader, wireMessages } from './dsh-request.ts'

const text = (value: string) => ({ type: 'text', text: value })
const header = (fields: Record<string, unknown>) =>
  readHeader({ header: { config: { provider: 'deepseek-official', model: 'deepseek-v4-flash' }, ...fields } })
const tool = (name: string, description = `The ${name} tool.`) => ({
  name,
  description,
  parameters: { type: 'object', properties: {} },
})

describe('a DSH message on the wire', () => {
  it('sends a tool result as a tool message after the user text, empty output as "(no output)"', () => {
    const message = {
      role: 'user',
      content: [
        text('See:'),
        { type: 'tool-result', toolCallId: 'call_1', content: [text('ok')] },
        { type: 'tool-result', toolCallId: 'call_2', content: [] },
      ],
    }
    expect(wireMessages(message)).toEqual([
      { role: 'user', content: 'See:' },
      { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
      { role: 'tool', tool_call_id: 'call_2', content: '(no output)' },
    ])
  })

  it('sends a pure tool-result message as tool messages alone', () => {
    const message = {
      role: 'user',
      content: [{ type: 'tool-result', toolCallId: 'c', content: [text('1')] }],
    }
    expect(wireMessages(message)).toEqual([{ role: 'tool', tool_call_id: 'c', content: '1' }])
  })

  it('sends an assistant message with its text ("" when none), its reasoning and its tool calls', () => {
    const message = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Think.' },
        { type: 'tool-call', id: 'call_9', name: 'bash', arguments: '{"command": "ls"}' },
      ],
    }
    expect(wireMessages(message)).toEqual([
      {
        role: 'assistant',
        content: '',
        reasoning_content: 'Think.',
        tool_calls: [
          { id: 'call_9', type: 'function', function: { name: 'bash', arguments: '{"command": "ls"}' } },
        ],
      },
    ])
  })
})

describe('a rebuilt DSH request', () => {
  it('carries the header system prompt first, the tools as functions, and the effort as thinking fields', () => {
    const builder = new DshRequestBuilder()
    builder.setHeader(
      header({ config: { model: 'deepseek-v4-flash', reasoningEffort: 'max', maxTokens: 900 } }),
    )
    builder.append(0, { role: 'user', content: [text('Hi')] })
    expect(builder.build()?.body).toEqual({
      model: 'deepseek-v4-flash',
      stream: true,
      stream_options: { include_usage: true },
      thinking: { type: 'enabled' },
      reasoning_effort: 'max',
      max_tokens: 900,
      messages: [{ role: 'user', content: 'Hi' }],
    })
    builder.setHeader(header({ system: 'Be kind.', tools: [tool('read')] }))
    const built = builder.build()
    expect(built?.body.messages).toEqual([
      { role: 'system', content: 'Be kind.' },
      { role: 'user', content: 'Hi' },
    ])
    expect(built?.body.tools).toEqual([{ type: 'function', function: tool('read') }])
    expect(built?.estimated).toMatch(/configured default is not logged/)
  })

  it('turns thinking off for effort off, and names placeholders it could not fill', () => {
    const builder = new DshRequestBuilder()
    builder.setHeader(
      readHeader({
        header: { config: { reasoningEffort: 'off' }, system: '{{system}}', tools: '{{tools}}' },
      }),
    )
    const built = builder.build()
    expect(built?.body.thinking).toEqual({ type: 'disabled' })
    expect(built?.body.tools).toBeUndefined()
    expect(built?.estimated).toMatch(/system prompt is a snapshot placeholder.*tool schemas are a snapshot/)
  })

  it('follows surface replacements, and shares the wire messages of nodes it repeats', () => {
    const builder = new DshRequestBuilder()
    builder.setHeader(header({}))
    for (const [seq, value] of [
      [2, 'one'],
      [5, 'two'],
      [7, 'three'],
    ] as const)
      builder.append(seq, { role: 'user', content: [text(value)] })
    const before = builder.build()?.body.messages as unknown[]
    expect(builder.replace(9, 2, 5, { role: 'user', content: [text('summary')] })).toBeUndefined()
    const after = builder.build()?.body.messages as unknown[]
    expect(after).toEqual([
      { role: 'user', content: 'summary' },
      { role: 'user', content: 'three' },
    ])
    expect(after[1]).toBe(before[2])
    expect(builder.replace(10, 7, 2, { role: 'user', content: [] })).toMatch(/not a range of the surface/)
  })

  it('sends generation C system nodes where they sit: a later one as a system message, an empty one as nothing', () => {
    const builder = new DshRequestBuilder()
    builder.setHeader(header({}))
    builder.append(1, { role: 'system', content: [text('Rules.')] })
    builder.append(2, { role: 'user', content: [text('Hi')] })
    builder.append(3, { role: 'system', content: [text('Rules, updated.')] })
    expect(builder.build()?.body.messages).toEqual([
      { role: 'system', content: 'Rules.' },
      { role: 'user', content: 'Hi' },
      { role: 'system', content: 'Rules, updated.' },
    ])
    expect(builder.replace(4, 3, 3, { role: 'system', content: [text('')] })).toBeUndefined()
    expect(builder.build()?.body.messages).toEqual([
      { role: 'system', content: 'Rules.' },
      { role: 'user', content: 'Hi' },
    ])
    // The empty node keeps its place on the surface.
    expect(builder.systemNodes()).toEqual([
      { seq: 1, text: 'Rules.' },
      { seq: 4, text: '' },
    ])
  })

  it('leaves image parts out and says so', () => {
    const builder = new DshRequestBuilder()
    builder.setHeader(header({}))
    builder.append(0, {
      role: 'user',
      content: [text('Look'), { type: 'image', attachment: { attachmentId: 'a' } }],
    })
    expect(builder.build()?.estimated).toMatch(/image parts left out/)
  })
})

describe('a changed DSH header', () => {
  it('shows which of system prompt, tools and config changed, without their text', () => {
    const before = header({ system: 'Old rules.', tools: [tool('read'), tool('write')] })
    const after = readHeader({
      header: {
        config: { provider: 'deepseek-official', model: 'deepseek-v4-pro', reasoningEffort: 'high' },
        system: 'New rules!',
        tools: [tool('read', 'Reads.'), tool('bash')],
      },
    })
    expect(headerChanges(before, after)).toEqual([
      { kind: 'system-change', detail: '10 → 10 characters, first difference at character 0' },
      { kind: 'tools-change', detail: 'added bash; removed write; changed read' },
      { kind: 'config-change', detail: 'reasoningEffort unset → "high"' },
    ])
  })

  it('shows a reordered tool list as such, and nothing for an equal header', () => {
    const before = header({ tools: [tool('a'), tool('b')] })
    expect(headerChanges(before, header({ tools: [tool('b'), tool('a')] }))).toEqual([
      { kind: 'tools-change', detail: 'reordered' },
    ])
    expect(headerChanges(before, header({ tools: [tool('a'), tool('b')] }))).toEqual([])
  })
})
