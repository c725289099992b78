import { describe, expect, it } from 'vitest'
import { CacheSimulators } from '../providers/sim/index.ts'
import type { WireApi } from '../providers/types.ts'
import {
  configOf,
  contentHash,
  digestRequest,
  itemDigest,
  type RequestDigest,
} from '../providers/wire/digest.ts'
import { changedSettings, wireBreak } from './wire-attribution.ts'

type Message = { role: string; content: string }
const user = (content: string): Message => ({ role: 'user', content })
const assistant = (content: string): Message => ({ role: 'assistant', content })

/** A chat request's digest: one segment per message (system first), 100 tokens each. */
function chat(messages: Message[], settings: Record<string, unknown> = {}): RequestDigest {
  const body = { model: 'gpt-5.4', messages, ...settings }
  return {
    segments: messages.map(
      (message, index) => [`messages[${index}]`, contentHash(JSON.stringify(message)), 100] as const,
    ),
    trailing: 3,
    total: messages.length * 100 + 3,
    items: messages.map(itemDigest),
    config: configOf(body),
  }
}

const system = { role: 'system', content: 'You are helpful.' }
const history = [system, user('q1'), assistant('a1'), user('q2'), assistant('a2')]

describe('wire-level attribution of captured traffic', () => {
  it('finds no break when the request extends the previous one', () => {
    expect(wireBreak(chat(history), chat([...history, user('q3')]))).toBeUndefined()
  })

  it('names a rewritten system message at its node', () => {
    const rewritten = [{ role: 'system', content: 'Changed.' }, ...history.slice(1), user('q3')]
    expect(wireBreak(chat(history), chat(rewritten))).toEqual({
      node: 'messages[0]',
      cause: 'system-replace',
    })
  })

  it('tells an edited message from dropped and summarized history', () => {
    const edited = [system, user('q1'), assistant('A1 EDITED'), user('q2'), assistant('a2'), user('q3')]
    expect(wireBreak(chat(history), chat(edited))).toEqual({ node: 'messages[2]', cause: 'message-edited' })
    const dropped = [system, user('q2'), assistant('a2'), user('q3')]
    expect(wireBreak(chat(history), chat(dropped))).toEqual({
      node: 'messages[1]',
      cause: 'history-truncated',
    })
    const summarized = [system, user('Summary of the conversation so far.'), user('q3')]
    expect(wireBreak(chat(history), chat(summarized))).toEqual({
      node: 'messages[1]',
      cause: 'history-summarized',
    })
  })

  it('names a model switch at the model, whatever else changed, both models kept in the digests', () => {
    expect(wireBreak(chat(history), chat([...history, user('q3')], { model: 'gpt-5.6' }))).toEqual({
      node: 'model',
      cause: 'config-changed',
      change: { node: 'model', kind: 'field', field: 'model', before: 'gpt-5.4', after: 'gpt-5.6' },
    })
  })

  it('names tools and the Anthropic system block by their part', () => {
    const withParts = (tool: string, systemText: string): RequestDigest => ({
      ...chat(history.slice(1)),
      segments: [
        ['tools[0]', contentHash(tool), 50],
        ['system[0]', contentHash(systemText), 500],
        ['messages[0]', contentHash('q1'), 10],
      ],
    })
    expect(wireBreak(withParts('read', 'sys'), withParts('read v2', 'sys'))).toEqual({
      node: 'tools[0]',
      cause: 'tools-changed',
    })
    expect(wireBreak(withParts('read', 'sys'), withParts('read', 'sys v2'))).toEqual({
      node: 'system[0]',
      cause: 'system-replace',
    })
  })

  it('lists the settings that changed between two requests', () => {
    expect(
      changedSettings(chat(history, { temperature: 0 }), chat(history, { temperature: 1, top_p: 0.5 })),
    ).toEqual(['temperature', 'top_p'])
  })
})

describe('wire-level attribution on the simulators’ own linearization', () => {
  const simulators = new CacheSimulators()
  const digest = (api: WireApi, body: Record<string, unknown>) =>
    digestRequest(body, simulators.linearize(api, body))
  const history = [
    { role: 'user', content: 'read the file' },
    { role: 'assistant', content: 'done' },
    { role: 'user', content: 'and now?' },
  ]

  it('names a changed thinking budget on Anthropic as a setting, at the first message it invalidates', () => {
    const body = (budget: number) => ({
      model: 'claude-sonnet-4-6',
      max_tokens: 4096,
      system: 'You are terse.',
      thinking: { type: 'enabled', budget_tokens: budget },
      messages: history,
    })
    expect(
      wireBreak(digest('anthropic-messages', body(1024)), digest('anthropic-messages', body(2048))),
    ).toEqual({
      node: 'messages[0]',
      cause: 'config-changed',
      change: {
        node: 'messages[0]',
        kind: 'field',
        field: 'thinking',
        before: '{"budget_tokens":1024,"type":"enabled"}',
        after: '{"budget_tokens":2048,"type":"enabled"}',
      },
    })
  })

  it('reads what changed in a text from the two prompts, when the port holds them', () => {
    const body = (instructions: string) => ({ model: 'gpt-5.4', instructions, input: history })
    const before = body('Be terse. Today is 2026-12-07.')
    const after = body('Be terse. Today is 2026-12-08.')
    const content = {
      previous: simulators.linearize('openai-responses', before),
      current: simulators.linearize('openai-responses', after),
    }
    const found = wireBreak(
      digestRequest(before, content.previous),
      digestRequest(after, content.current),
      false,
      content,
    )
    expect(found?.change).toEqual({
      node: 'system[0]',
      kind: 'replaced',
      context: 'Be terse. Today is ',
      before: '2026-12-07',
      after: '2026-12-08',
    })
    // Without them, the digests say where, not what: they hold no text.
    expect(wireBreak(digestRequest(before, content.previous), digestRequest(after, content.current))).toEqual(
      { node: 'system[0]', cause: 'system-replace' },
    )
  })

  it('names rewritten Responses instructions as the system prompt', () => {
    const body = (instructions: string) => ({ model: 'gpt-5.4', instructions, input: history })
    expect(
      wireBreak(digest('openai-responses', body('Be terse.')), digest('openai-responses', body('Be brief.'))),
    ).toEqual({
      node: 'system[0]',
      cause: 'system-replace',
    })
  })
})
