import { describe, expect, it } from 'vitest'
import { CacheSimulators } from '../providers/sim/index.ts'
import type { Prompt, Segment, WireNode } from '../providers/sim/types.ts'
import {
  CONTEXT_CHARACTERS,
  changeAt,
  changeLines,
  modelChange,
  requestChange,
  SIDE_CHARACTERS,
  settingChange,
  textChange,
} from './break-change.ts'

/** A prompt of text segments, each its own message block. */
function prompt(...texts: Array<string | { frame: string; text: string; node: WireNode }>): Prompt {
  const segments: Segment[] = texts.map((entry, index) =>
    typeof entry === 'string'
      ? { frame: 'user|text|', text: entry, framing: 3, tokens: 10, node: { part: 'messages', index } }
      : { ...entry, framing: 0, tokens: 10 },
  )
  return {
    segments,
    cumulative: segments.map((_, index) => (index + 1) * 10),
    trailing: 0,
    total: 10 * texts.length,
  }
}

const KEY = `sk-${'Zq8wXv4Tb2'.repeat(4)}`

describe('the change inside one text', () => {
  it('widens a changed character to its whole word: a date shows whole', () => {
    expect(
      textChange('Today is 2026-12-07. Be brief.', 'Today is 2026-12-08. Be brief.', 'system[0]'),
    ).toEqual({
      node: 'system[0]',
      kind: 'replaced',
      context: 'Today is ',
      before: '2026-12-07',
      after: '2026-12-08',
    })
  })

  it('calls words added between two others inserted, and the reverse removed', () => {
    expect(textChange('Hello world', 'Hello big world', 'messages[0]')).toEqual({
      node: 'messages[0]',
      kind: 'inserted',
      context: 'Hello ',
      after: 'big ',
    })
    expect(textChange('Hello big world', 'Hello world', 'messages[0]')).toEqual({
      node: 'messages[0]',
      kind: 'removed',
      context: 'Hello ',
      before: 'big ',
    })
  })

  it('names a change at the very start with no shared text before it', () => {
    expect(textChange('Be brief.', 'Mode: review. Be brief.', 'system[0]')).toEqual({
      node: 'system[0]',
      kind: 'inserted',
      after: 'Mode: review. ',
    })
  })

  it(`keeps at most ${CONTEXT_CHARACTERS} characters of shared text, from a word's start, and ${SIDE_CHARACTERS} of each side`, () => {
    const shared = `${'lorem ipsum dolor '.repeat(10)}end: `
    const change = textChange(`${shared}${'a'.repeat(300)}`, `${shared}${'b '.repeat(150)}`, 'system[0]')
    expect(change.context?.startsWith('…')).toBe(true)
    expect(change.context?.length).toBeLessThanOrEqual(CONTEXT_CHARACTERS + 1)
    expect(change.context).toMatch(/^… ?[a-z]/)
    expect(shared.endsWith(change.context?.slice(1) ?? '')).toBe(true)
    expect(change.before).toBe(`${'a'.repeat(SIDE_CHARACTERS)}…`)
    expect(change.after).toBe(`${'b '.repeat(SIDE_CHARACTERS / 2)}…`)
  })

  it('never cuts a character in two', () => {
    const shared = `${'😀'.repeat(40)} `
    const change = textChange(`${shared}x`, `${shared}y`, 'messages[0]')
    expect(change.context).toBe(`…${'😀'.repeat(30)} `)
    expect(change.context).not.toMatch(/[\uD800-\uDFFF]/u)
  })
})

describe('keys in a change', () => {
  it('are masked in the changed text, in the text before it and in a verbatim secret', () => {
    const change = textChange(`token ${KEY} mode fast`, `token ${KEY} mode careful`, 'system[0]')
    expect(change).toEqual({
      node: 'system[0]',
      kind: 'replaced',
      context: 'token [redacted] mode ',
      before: 'fast',
      after: 'careful',
    })
    const rotated = textChange(`key ${KEY}`, `key ${KEY.replace('Zq8', 'Yq8')}`, 'system[0]')
    expect(rotated).toMatchObject({ before: '[redacted]', after: '[redacted]' })
    const secret = textChange('use hunter2-password now', 'use hunter2-password later', 'x', [
      'hunter2-password',
    ])
    expect(secret.context).toBe('use [redacted] ')
  })

  it('are never shown in part where the shared text is cut', () => {
    // The key ends where the kept window of shared text would start.
    const before = `${KEY} ${'x'.repeat(CONTEXT_CHARACTERS - 6)} old`
    const change = textChange(before, before.replace(' old', ' new'), 'system[0]')
    expect(change.context).not.toMatch(/Zq8|Tb2/)
    const long = `${'w'.repeat(40)}${KEY}${'y'.repeat(10)} old`
    expect(JSON.stringify(textChange(long, long.replace(' old', ' new'), 'x'))).not.toMatch(/Zq8|Tb2/)
  })
})

describe('the change at a divergent segment', () => {
  it('names segments inserted before the previous request’s segment as inserted, the segment before them shared', () => {
    const previous = prompt('You are terse.', 'q1', 'a1')
    const current = prompt('You are terse.', 'Today is 2026-12-07.', 'q1', 'a1')
    expect(changeAt({ previous, current }, 1, 'messages[1]')).toEqual({
      node: 'messages[1]',
      kind: 'inserted',
      context: 'You are terse.',
      after: 'Today is 2026-12-07.',
    })
  })

  it('names segments removed as removed, and a history cut short the same', () => {
    const previous = prompt('sys', 'q1', 'a1', 'q2')
    expect(changeAt({ previous, current: prompt('sys', 'q2') }, 1, 'messages[1]')).toEqual({
      node: 'messages[1]',
      kind: 'removed',
      context: 'sys',
      before: 'q1\na1',
    })
    expect(changeAt({ previous, current: prompt('sys', 'q1') }, 2, 'messages[2]')).toEqual({
      node: 'messages[2]',
      kind: 'removed',
      context: 'q1',
      before: 'a1\nq2',
    })
  })

  it('shows a block that is no text by its framing: an image replaced by a placeholder', () => {
    const image = {
      frame: 'user|image\u0002base64|image/png|iVBORw0KGgo',
      text: '',
      node: { part: 'messages', index: 0, block: 1 } as WireNode,
    }
    const placeholder = { frame: 'user|text|', text: '[image omitted]', node: image.node }
    expect(changeAt({ previous: prompt(image), current: prompt(placeholder) }, 0, 'messages[0].1')).toEqual({
      node: 'messages[0].1',
      kind: 'replaced',
      before: '[user|image]',
      after: '[image omitted]',
    })
    // The same image under another setting folded into its framing is that setting.
    const framed = { ...image, frame: `messages:{"effort":"high"}\u0003${image.frame}` }
    const settings = { previous: {}, current: { output_config: { effort: 'high' } } }
    expect(
      changeAt({ previous: prompt(image), current: prompt(framed) }, 0, 'messages[0].1', settings),
    ).toEqual({
      node: 'messages[0].1',
      kind: 'field',
      field: 'output_config',
      after: '{"effort":"high"}',
    })
  })

  it('names the key of a tool’s schema that changed, and the tool by its name', () => {
    const tool = (description: string) => ({
      frame: 'tool',
      text: JSON.stringify({
        name: 'read_file',
        input_schema: { type: 'object', properties: { path: { type: 'string', description } } },
      }),
      node: { part: 'tools', index: 2 } as WireNode,
    })
    const change = changeAt(
      { previous: prompt(tool('A path.')), current: prompt(tool('The path to read.')) },
      0,
      'tools[2]',
    )
    expect(change).toEqual({
      node: 'tools[2]',
      kind: 'field',
      field: 'tools[2].input_schema.properties.path.description',
      context: 'read_file',
      before: 'A path.',
      after: 'The path to read.',
    })
    expect(changeLines(change)).toEqual([
      'tools[2].input_schema.properties.path.description changed (tool read_file)',
      '- "A path."',
      '+ "The path to read."',
    ])
  })

  it('names the setting folded into a segment whose text is the same, else shows how its framing differs', () => {
    const framed = (frame: string) => prompt({ frame, text: 'q1', node: { part: 'messages', index: 0 } })
    const previous = framed('messages:{"tool_choice":null}\u0003user|text|')
    const current = framed('messages:{"tool_choice":"any"}\u0003user|text|')
    const settings = { previous: { model: 'm' }, current: { model: 'm', tool_choice: 'any' } }
    expect(changeAt({ previous, current }, 0, 'messages[0]', settings)).toEqual({
      node: 'messages[0]',
      kind: 'field',
      field: 'tool_choice',
      after: 'any',
    })
    expect(changeAt({ previous, current }, 0, 'messages[0]')).toMatchObject({
      kind: 'replaced',
      before: 'null',
      after: '"any"',
    })
  })
})

describe('fields', () => {
  it('name a model switch and the first setting that differs, masked as text is', () => {
    expect(modelChange('gpt-5.4', 'gpt-5.6')).toEqual({
      node: 'model',
      kind: 'field',
      field: 'model',
      before: 'gpt-5.4',
      after: 'gpt-5.6',
    })
    expect(
      settingChange(
        { previous: { temperature: 0, user: KEY }, current: { temperature: 1, user: `x${KEY}` } },
        'messages[0]',
      ),
    ).toEqual({ node: 'messages[0]', kind: 'field', field: 'temperature', before: '0', after: '1' })
    expect(
      settingChange({ previous: { seed: KEY }, current: { seed: 'other' } }, 'messages[0]'),
    ).toMatchObject({
      before: '[redacted]',
    })
    expect(settingChange({ previous: { a: 1 }, current: { a: 1 } }, 'messages[0]')).toBeUndefined()
  })
})

describe('what changed between two sent requests', () => {
  const simulators = new CacheSimulators()
  const sent = (system: string, model = 'claude-sonnet-4-6') => {
    const body = { model, max_tokens: 64, system, messages: [{ role: 'user', content: 'hello' }] }
    return { body, prompt: simulators.linearize('anthropic-messages', body) }
  }

  it('is the model, else the text at the first segment that differs, named as the wire names it', () => {
    expect(requestChange(sent('Be brief.'), sent('Be brief.'))).toBeUndefined()
    expect(requestChange(sent('Be brief.'), sent('Be brief.', 'claude-opus-4-8'))).toMatchObject({
      node: 'model',
      before: 'claude-sonnet-4-6',
    })
    expect(requestChange(sent('Be brief. Day 1.'), sent('Be brief. Day 2.'))).toEqual({
      node: 'system[0]',
      kind: 'replaced',
      context: 'Be brief. Day ',
      before: '1',
      after: '2',
    })
  })
})

describe('the lines a test runner prints', () => {
  it('say where and what, then the previous side and this one, quoted with their escapes', () => {
    expect(
      changeLines({
        node: 'system[0]',
        kind: 'replaced',
        context: 'Today is ',
        before: '2026-12-07',
        after: '2026-12-08',
      }),
    ).toEqual(['system[0]: replaced after "Today is "', '- "2026-12-07"', '+ "2026-12-08"'])
    expect(changeLines({ node: 'messages[2]', kind: 'removed', before: 'a1\nq2' })).toEqual([
      'messages[2]: removed at its start',
      '- "a1\\nq2"',
    ])
    expect(changeLines({ node: 'messages[0]', kind: 'field', field: 'tool_choice', after: 'any' })).toEqual([
      'tool_choice changed at messages[0]',
      '- (not set)',
      '+ "any"',
    ])
    expect(changeLines(modelChange('a', 'b'))[0]).toBe('model changed')
  })
})
