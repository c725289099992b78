// Attribution on requests built as a run builds them: a session log folded into a projection, derived,
// turned into a wire body by the adapter and linearized by the cache simulator.

import { describe, expect, it } from 'vitest'
import { deriveRequest } from '../harness/derive.ts'
import { syntheticImage } from '../harness/png.ts'
import { SessionProjection } from '../harness/session.ts'
import type {
  AssistantMessage,
  EventDraft,
  HeaderReason,
  ImageBlock,
  MessageSource,
  RequestHeader,
  Seq,
  SessionEvent,
  ToolSchema,
  UserMessage,
} from '../harness/types.ts'
import { buildAnthropicRequest } from '../providers/anthropic-request.ts'
import { buildOpenAIChatRequest } from '../providers/openai-chat.ts'
import { firstDivergence } from '../providers/sim/counterfactual.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import type { Prompt } from '../providers/sim/types.ts'
import type { WireApi } from '../providers/types.ts'
import { type AttributedRequest, type Attribution, clientBreak } from './attribution.ts'
import type { BreakChange } from './types.ts'

const READ_FILE: ToolSchema = {
  name: 'read_file',
  description: 'Read a file.',
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
}
const GREP: ToolSchema = {
  name: 'grep',
  description: 'Search files for a pattern.',
  parameters: { type: 'object', properties: { pattern: { type: 'string' } } },
}
const SONNET: RequestHeader = {
  config: { provider: 'anthropic', model: 'claude-sonnet-4-6' },
  system: 'You are a terse coding agent.',
  tools: [READ_FILE],
}

const COMPACTION: MessageSource = { kind: 'plugin', plugin: 'compaction' }
/** The system prompt of a header that names the day, as an agent's prompt often does. */
const dated = (day: string) => `You are a terse coding agent. Today is ${day}.`

const header = (value: RequestHeader, reason: HeaderReason = 'change'): EventDraft => ({
  type: 'request/header',
  data: { header: value, reason },
})
const user = (
  text: string,
  images: ImageBlock[] = [],
  source: MessageSource = { kind: 'user' },
): EventDraft => ({
  type: 'user/message',
  data: { turn: 1, message: { role: 'user', content: [{ type: 'text', text }, ...images] }, source },
  surfaceOp: 'append',
})
const assistant = (content: AssistantMessage['content']): EventDraft => ({
  type: 'assistant/message',
  data: { turn: 1, step: 1, attempt: 0, message: { role: 'assistant', content } },
  surfaceOp: 'append',
})
const toolResult = (text: string): EventDraft => ({
  type: 'tool/result',
  data: { turn: 1, step: 1, message: { role: 'tool', callId: 'call_1', name: 'read_file', text } },
  surfaceOp: 'append',
})
const system = (text: string): EventDraft => ({
  type: 'system/message',
  data: { turn: 1, step: 1, message: { role: 'system', text } },
  surfaceOp: 'append',
})
/** `draft` written over the live surface nodes `startSeq`..`endSeq`. */
const replacing = (draft: EventDraft, startSeq: Seq, endSeq: Seq): EventDraft =>
  ({
    ...draft,
    surfaceOp: { op: 'replace', startSeq, endSeq },
    sourceEventSeqs: Array.from({ length: endSeq - startSeq + 1 }, (_, offset) => startSeq + offset),
  }) as EventDraft

/** A turn that reads a file: the user at seq 4, the tool call 5, its result 6, the answer 7. */
const READ_TURN: EventDraft[] = [
  user('Summarize a.ts.'),
  assistant([{ type: 'tool-call', callId: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' }]),
  toolResult('export const a = 1\nexport const b = 2\n'),
  assistant([{ type: 'text', text: 'a.ts exports two constants.' }]),
]

/** A session log (header at seq 1, surface from seq 4) and the requests the loop would send from it. */
class Session {
  private readonly projection = SessionProjection.empty('session')
  private readonly simulators = new CacheSimulators()
  private readonly api: WireApi

  constructor(initial: RequestHeader, surface: EventDraft[], api: WireApi = 'anthropic-messages') {
    this.api = api
    const { provider, model } = initial.config
    this.add(
      { type: 'session/start', data: { formatVersion: 1, sessionId: 'session' } },
      header(initial, 'initial'),
      { type: 'request/context', data: { provider, model, systemPromptUpdate: 'in-history' } },
      { type: 'turn/start', data: { turn: 1 } },
      ...surface,
    )
  }

  /** Commit events; the seq of the last one. */
  add(...drafts: EventDraft[]): Seq {
    for (const draft of drafts) {
      const seq = this.projection.nextSeq
      this.projection.apply({ seq, time: seq, ...draft } as SessionEvent)
    }
    return this.projection.nextSeq - 1
  }

  /** The next request; `settings` are request-level fields set on the wire body by hand. */
  request(settings: Record<string, unknown> = {}): AttributedRequest {
    const derived = deriveRequest(this.projection)
    const built =
      this.api === 'anthropic-messages'
        ? buildAnthropicRequest(derived, { stream: false })
        : buildOpenAIChatRequest(derived, { stream: false })
    const body = { ...built.body, ...settings }
    const trace = { carry: { tokens: 0, liveUntil: 0 }, matched: 0 }
    return { prompt: this.simulators.linearize(this.api, body), body, sources: built.sources, trace }
  }

  /**
   * The client break from `previous` to `current`, with events and offloads looked up in this log: its
   * node, event and cause (what changed there is `changeOf`'s).
   */
  breakOf(previous: AttributedRequest, current = this.request()): Attribution | undefined {
    const found = this.attribution(previous, current)
    if (found === undefined) return undefined
    const { change: _change, ...rest } = found
    return rest
  }

  /** What changed at the break from `previous` to `current`. */
  changeOf(previous: AttributedRequest, current = this.request()): BreakChange | undefined {
    return this.attribution(previous, current)?.change
  }

  private attribution(previous: AttributedRequest, current: AttributedRequest): Attribution | undefined {
    const log = this.projection.log
    return clientBreak(
      previous,
      current,
      (seq) => log[seq],
      (seq) =>
        log.find(
          (event) =>
            event.type === 'image/offload' && event.data.targets.some((target) => target.seq === seq),
        ),
    )
  }
}

/** The same prompt without its `base`, so that firstDivergence scans it from the start. */
function fullScan(prompt: Prompt): Prompt {
  const { base: _base, ...rest } = prompt
  return rest
}

describe('firstDivergence', () => {
  it('is undefined when the request extends the previous one, with or without the base shortcut', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    session.add(user('Now b.ts.'))
    const current = session.request()
    expect(current.prompt.base?.segments).toBe(previous.prompt.segments)
    expect(current.prompt.segments.length).toBeGreaterThan(previous.prompt.segments.length)
    expect(firstDivergence(previous.prompt, current.prompt)).toBeUndefined()
    expect(firstDivergence(previous.prompt, fullScan(current.prompt))).toBeUndefined()
    expect(firstDivergence(previous.prompt, previous.prompt)).toBeUndefined()
  })

  it('is the index of the first segment that differs, past the shared base, as a full scan finds', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    session.add(replacing(toolResult('[pruned]'), 6, 6))
    const current = session.request()
    const base = current.prompt.base
    expect(base?.segments).toBe(previous.prompt.segments)
    expect(base?.count).toBe(3)
    expect(firstDivergence(previous.prompt, current.prompt)).toBe(4)
    expect(firstDivergence(previous.prompt, fullScan(current.prompt))).toBe(4)
    expect(current.prompt.segments[4]?.node).toEqual({ part: 'messages', index: 2, block: 0 })
  })

  it('scans from the start when the base is another prompt', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    session.add(replacing(user('Summarize a.ts briefly.'), 4, 4))
    const current = session.request()
    const misleading = { ...current.prompt, base: { segments: current.prompt.segments, count: 6 } }
    expect(firstDivergence(previous.prompt, misleading)).toBe(2)
    expect(firstDivergence(previous.prompt, current.prompt)).toBe(2)
  })

  it('diverges where a shorter request ends', () => {
    const session = new Session(SONNET, READ_TURN)
    const longer = session.request()
    session.add(replacing(assistant([]), 7, 7))
    const shorter = session.request()
    expect(shorter.prompt.segments).toHaveLength(longer.prompt.segments.length - 1)
    expect(firstDivergence(longer.prompt, shorter.prompt)).toBe(longer.prompt.segments.length - 1)
  })
})

describe('clientBreak', () => {
  it('finds no break when the request extends the previous one on the same model', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    session.add(user('Now b.ts.'))
    expect(session.breakOf(previous)).toBeUndefined()
  })

  it('blames a model change on the header that made it, before comparing prompts', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    const seq = session.add(header({ ...SONNET, config: { ...SONNET.config, model: 'claude-opus-4-8' } }))
    expect(session.breakOf(previous)).toEqual({ node: 'model', eventSeq: seq, cause: 'config-changed' })
  })

  it('names the first changed tool definition and the header that holds the tools', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    const seq = session.add(header({ ...SONNET, tools: [READ_FILE, GREP] }))
    expect(session.breakOf(previous)).toEqual({ node: 'tools[1]', eventSeq: seq, cause: 'tools-changed' })
  })

  it.each([
    { api: 'anthropic-messages' as const, model: 'claude-sonnet-4-6', node: 'system[0]' },
    { api: 'openai-chat' as const, model: 'gpt-5.4', node: 'messages[0]' },
  ])('attributes a replaced system message to its event on $api', ({ api, model, node }) => {
    const initial: RequestHeader = { config: { provider: api === 'openai-chat' ? api : 'anthropic', model } }
    const session = new Session(initial, [system('You are terse.'), ...READ_TURN], api)
    const previous = session.request()
    const seq = session.add(replacing(system('You are terse. Answer in French.'), 4, 4))
    expect(session.breakOf(previous)).toEqual({ node, eventSeq: seq, cause: 'system-replace' })
  })

  it('attributes a pruned tool result to the replacing tool/result', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    session.add({ type: 'compaction/start', data: { compactionId: 'c1', kind: 'prune' } })
    session.add({
      type: 'compaction/prune',
      data: { compactionId: 'c1', shadowedRange: { start: 6, end: 6 }, shadowedSeqs: [6], keep: 'head' },
    })
    const seq = session.add(replacing(toolResult('export const a = 1\n[… 1 line pruned]'), 6, 6))
    session.add({ type: 'compaction/end', data: { compactionId: 'c1' } })
    const found = session.breakOf(previous)
    expect(found).toEqual({ node: 'messages[2].0', eventSeq: seq, cause: 'tool-result-prune' })
  })

  it('attributes a summary that replaced the history to the compaction plugin message', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    session.add({ type: 'compaction/start', data: { compactionId: 'c1', kind: 'summary' } })
    session.add({
      type: 'compaction/summary',
      data: { compactionId: 'c1', shadowedRange: { start: 4, end: 7 }, shadowedSeqs: [4, 5, 6, 7] },
    })
    const summary = user('The user asked for a.ts; it exports a and b.', [], COMPACTION)
    const seq = session.add(replacing(summary, 4, 7))
    session.add({ type: 'compaction/end', data: { compactionId: 'c1' } })
    const found = session.breakOf(previous)
    expect(found).toEqual({ node: 'messages[0].0', eventSeq: seq, cause: 'compaction-summary' })
  })

  it('calls it after-slot when history overtakes the request-only messages the previous request ended with', () => {
    const reminder: UserMessage = {
      role: 'user',
      content: [{ type: 'text', text: '<reminder>a.ts</reminder>' }],
    }
    const session = new Session({ ...SONNET, afterSlot: [reminder] }, READ_TURN)
    const previous = session.request()
    expect(previous.sources.messages.at(-1)).toEqual([1])
    session.add(user('Now b.ts.'))
    expect(session.breakOf(previous)).toEqual({ node: 'messages[4].0', eventSeq: 1, cause: 'after-slot' })
  })

  it('calls it config-changed when the diverging wire node is unchanged but a setting folded into it is', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    const current = session.request({ tool_choice: { type: 'any' } })
    expect(JSON.stringify((current.body.messages as unknown[])[0])).toBe(
      JSON.stringify((previous.body.messages as unknown[])[0]),
    )
    const found = session.breakOf(previous, current)
    expect(found).toEqual({ node: 'messages[0].0', eventSeq: 4, cause: 'config-changed' })
  })

  it('attributes an image replaced by its placeholder to the image/offload event', () => {
    const session = new Session(SONNET, [
      user('What is in this screenshot?', [syntheticImage('a', 64, 64)]),
      assistant([{ type: 'text', text: 'A login form.' }]),
      user('And this one?', [syntheticImage('b', 64, 64)]),
      assistant([{ type: 'text', text: 'An error page.' }]),
    ])
    const previous = session.request()
    const targets = [{ seq: 4, imageIds: ['a'] }]
    const seq = session.add({ type: 'image/offload', data: { mode: 'quantized', targets } })
    const found = session.breakOf(previous)
    expect(found).toEqual({ node: 'messages[0].1', eventSeq: seq, cause: 'image-offload' })
  })

  it('calls a system prompt changed in the header system-replace, whether written on resume or as a change', () => {
    const session = new Session({ ...SONNET, system: dated('Monday') }, READ_TURN)
    const first = session.request()
    const resumed = session.add(header({ ...SONNET, system: dated('Tuesday') }, 'resume'))
    const second = session.request()
    const drift = session.breakOf(first, second)
    expect(drift).toEqual({ node: 'system[0]', eventSeq: resumed, cause: 'system-replace' })
    const changed = session.add(header({ ...SONNET, system: dated('Wednesday') }))
    const change = session.breakOf(second)
    expect(change).toEqual({ node: 'system[0]', eventSeq: changed, cause: 'system-replace' })
  })

  it.each([
    { api: 'anthropic-messages' as const, model: 'claude-sonnet-4-6', node: 'tools[1]' },
    { api: 'openai-chat' as const, model: 'gpt-5.4', node: 'tools[1]' },
  ])(
    'names a removed last tool, not the part after it, and the header that dropped it on $api',
    ({ api, model, node }) => {
      const provider = api === 'openai-chat' ? api : 'anthropic'
      const initial: RequestHeader = { config: { provider, model }, tools: [READ_FILE, GREP] }
      const session = new Session(initial, [system('You are terse.'), ...READ_TURN], api)
      const previous = session.request()
      const seq = session.add(header({ ...initial, tools: [READ_FILE] }))
      expect(session.breakOf(previous)).toEqual({ node, eventSeq: seq, cause: 'tools-changed' })
    },
  )

  it('names a removed last tool when the system prompt is in the header too', () => {
    const session = new Session({ ...SONNET, tools: [READ_FILE, GREP] }, READ_TURN)
    const previous = session.request()
    const seq = session.add(header({ ...SONNET, tools: [READ_FILE] }))
    expect(session.breakOf(previous)).toEqual({ node: 'tools[1]', eventSeq: seq, cause: 'tools-changed' })
  })

  it('names the only tool removed, the whole tools part gone', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    const { tools: _tools, ...withoutTools } = SONNET
    const seq = session.add(header(withoutTools))
    expect(session.breakOf(previous)).toEqual({ node: 'tools[0]', eventSeq: seq, cause: 'tools-changed' })
  })

  it('calls a session prefix that shrank on resume prefix-drift, on the resume header', () => {
    const skill = (text: string): UserMessage => ({ role: 'user', content: [{ type: 'text', text }] })
    const session = new Session(
      { ...SONNET, messagePrefix: [skill('skill: a'), skill('skill: b')] },
      READ_TURN,
    )
    const previous = session.request()
    const seq = session.add(header({ ...SONNET, messagePrefix: [skill('skill: a')] }, 'resume'))
    expect(session.breakOf(previous)).toMatchObject({ eventSeq: seq, cause: 'prefix-drift' })
  })

  it('attributes offloading the only image, which changes the head on Anthropic, to the offload', () => {
    const session = new Session(SONNET, [
      ...READ_TURN,
      user('And this?', [syntheticImage('b', 64, 64)]),
      assistant([{ type: 'text', text: 'An error page.' }]),
    ])
    const previous = session.request()
    const targets = [{ seq: 8, imageIds: ['b'] }]
    const seq = session.add({ type: 'image/offload', data: { mode: 'quantized', targets } })
    expect(session.breakOf(previous)).toMatchObject({ eventSeq: seq, cause: 'image-offload' })
  })

  it('attributes the first image of a session, which changes the head on Anthropic, to its message', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    const seq = session.add(user('And this?', [syntheticImage('b', 64, 64)]))
    expect(session.breakOf(previous)).toMatchObject({ eventSeq: seq, cause: 'config-changed' })
  })

  it('names the header of a model change when the request has no tools', () => {
    const initial: RequestHeader = { config: SONNET.config, system: 'You are terse.' }
    const session = new Session(initial, READ_TURN)
    const previous = session.request()
    const seq = session.add(
      header({ ...initial, config: { provider: 'anthropic', model: 'claude-opus-4-8' } }),
    )
    expect(session.breakOf(previous)).toEqual({ node: 'model', eventSeq: seq, cause: 'config-changed' })
  })
})

describe('clientBreak under a frozen session prefix (the header holds it)', () => {
  const skill = (text: string): UserMessage => ({ role: 'user', content: [{ type: 'text', text }] })
  const FROZEN: RequestHeader = { ...SONNET, messagePrefix: [skill('skill: a'), skill('skill: b')] }
  const CHAT: RequestHeader = {
    config: { provider: 'openai-chat', model: 'gpt-5.4' },
    system: 'You are a terse coding agent.',
    tools: [READ_FILE],
    messagePrefix: FROZEN.messagePrefix ?? [],
  }

  it.each([
    { api: 'anthropic-messages' as const, initial: FROZEN, node: 'system[0]' },
    { api: 'openai-chat' as const, initial: CHAT, node: 'messages[0]' },
  ])('calls a changed system prompt system-replace, not prefix-drift, on $api', ({ api, initial, node }) => {
    const session = new Session(initial, READ_TURN, api)
    const previous = session.request()
    const seq = session.add(header({ ...initial, system: 'You are a verbose coding agent.' }))
    expect(session.breakOf(previous)).toEqual({ node, eventSeq: seq, cause: 'system-replace' })
  })

  it('calls a system prompt that drifted across a restart system-replace when the prefix recomposed the same', () => {
    const session = new Session(FROZEN, READ_TURN)
    const previous = session.request()
    const seq = session.add(header({ ...FROZEN, system: dated('Tuesday') }, 'resume'))
    expect(session.breakOf(previous)).toEqual({ node: 'system[0]', eventSeq: seq, cause: 'system-replace' })
  })

  it.each([
    { api: 'anthropic-messages' as const, initial: FROZEN, node: 'messages[1].0' },
    { api: 'openai-chat' as const, initial: CHAT, node: 'messages[2]' },
  ])(
    'calls a prefix that recomposed differently on resume prefix-drift, at the message that changed, on $api',
    ({ api, initial, node }) => {
      const session = new Session(initial, READ_TURN, api)
      const previous = session.request()
      const drifted = [skill('skill: a'), skill('skill: b, c')]
      const seq = session.add(header({ ...initial, messagePrefix: drifted }, 'resume'))
      expect(session.breakOf(previous)).toEqual({ node, eventSeq: seq, cause: 'prefix-drift' })
    },
  )

  it('names the system prompt when both the system prompt and the prefix changed, as it comes first on the wire', () => {
    const session = new Session(FROZEN, READ_TURN)
    const previous = session.request()
    const changed = { ...FROZEN, system: dated('Tuesday'), messagePrefix: [skill('skill: z')] }
    const seq = session.add(header(changed, 'resume'))
    expect(session.breakOf(previous)).toEqual({ node: 'system[0]', eventSeq: seq, cause: 'system-replace' })
  })

  it('calls a prefix added where the previous request sent nothing from its header prefix-drift', () => {
    const bare: RequestHeader = { config: SONNET.config }
    const session = new Session(bare, [system('You are terse.'), ...READ_TURN])
    const previous = session.request()
    expect(previous.sources.tools).toEqual([])
    const seq = session.add(header({ ...bare, messagePrefix: [skill('skill: a')] }))
    expect(session.breakOf(previous)).toEqual({ node: 'messages[0].0', eventSeq: seq, cause: 'prefix-drift' })
  })

  it('finds no break for a temperature change or an unchanged resume header (sampling is not in the cache key)', () => {
    const session = new Session(FROZEN, READ_TURN)
    const first = session.request()
    session.add(header({ ...FROZEN, config: { ...FROZEN.config, temperature: 0.2 } }))
    const second = session.request()
    expect(session.breakOf(first, second)).toBeUndefined()
    session.add(header({ ...FROZEN, config: { ...FROZEN.config, temperature: 0.2 } }, 'resume'))
    expect(session.breakOf(second)).toBeUndefined()
  })

  it('calls a model change config-changed at the model', () => {
    const session = new Session(FROZEN, READ_TURN)
    const previous = session.request()
    const seq = session.add(header({ ...FROZEN, config: { ...FROZEN.config, model: 'claude-opus-4-8' } }))
    expect(session.breakOf(previous)).toEqual({ node: 'model', eventSeq: seq, cause: 'config-changed' })
  })

  it('names a removed last tool tools-changed, not the prefix or system after it', () => {
    const initial = { ...FROZEN, tools: [READ_FILE, GREP] }
    const session = new Session(initial, READ_TURN)
    const previous = session.request()
    const seq = session.add(header({ ...initial, tools: [READ_FILE] }, 'resume'))
    expect(session.breakOf(previous)).toEqual({ node: 'tools[1]', eventSeq: seq, cause: 'tools-changed' })
  })

  it('calls a prefix dropped on resume prefix-drift at the history message that took its place', () => {
    const session = new Session(FROZEN, READ_TURN)
    const previous = session.request()
    const { messagePrefix: _prefix, ...withoutPrefix } = FROZEN
    const seq = session.add(header(withoutPrefix, 'resume'))
    expect(session.breakOf(previous)).toEqual({ node: 'messages[0].0', eventSeq: seq, cause: 'prefix-drift' })
  })
})

describe('what changed at a client break', () => {
  it('shows the day a dated system prompt changed, the words before it shared', () => {
    const session = new Session({ ...SONNET, system: dated('2026-12-07') }, READ_TURN)
    const previous = session.request()
    session.add(header({ ...SONNET, system: dated('2026-12-08') }))
    expect(session.changeOf(previous)).toEqual({
      node: 'system[0]',
      kind: 'replaced',
      context: 'You are a terse coding agent. Today is ',
      before: '2026-12-07',
      after: '2026-12-08',
    })
  })

  it('names a model switch as the model field, both names given', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    session.add(header({ ...SONNET, config: { ...SONNET.config, model: 'claude-opus-4-8' } }))
    expect(session.changeOf(previous)).toEqual({
      node: 'model',
      kind: 'field',
      field: 'model',
      before: 'claude-sonnet-4-6',
      after: 'claude-opus-4-8',
    })
  })

  it('names the key of a tool’s schema that changed, and the tool', () => {
    const session = new Session({ ...SONNET, tools: [READ_FILE, GREP] }, READ_TURN)
    const previous = session.request()
    const described = {
      ...GREP,
      parameters: { type: 'object', properties: { pattern: { type: 'string', description: 'A regex.' } } },
    }
    session.add(header({ ...SONNET, tools: [READ_FILE, described] }))
    expect(session.changeOf(previous)).toEqual({
      node: 'tools[1]',
      kind: 'field',
      field: 'tools[1].input_schema.properties.pattern.description',
      context: 'grep',
      after: 'A regex.',
    })
  })

  it('shows a tool added after the others as inserted, its declaration given', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    session.add(header({ ...SONNET, tools: [READ_FILE, GREP] }))
    const change = session.changeOf(previous)
    expect(change).toMatchObject({ node: 'tools[1]', kind: 'inserted' })
    expect(change?.after).toContain('"name":"grep"')
    expect(change?.before).toBeUndefined()
  })

  it('shows a removed last tool as removed, its declaration given', () => {
    const session = new Session({ ...SONNET, tools: [READ_FILE, GREP] }, READ_TURN)
    const previous = session.request()
    session.add(header({ ...SONNET, tools: [READ_FILE] }))
    const change = session.changeOf(previous)
    expect(change).toMatchObject({ node: 'tools[1]', kind: 'removed' })
    expect(change?.before).toContain('"name":"grep"')
  })

  it('shows what a prune cut out of a tool result as removed, after the text it kept', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    session.add(replacing(toolResult('export const a = 1\n'), 6, 6))
    expect(session.changeOf(previous)).toEqual({
      node: 'messages[2].0',
      kind: 'removed',
      context: 'export const a = 1\n',
      before: 'export const b = 2\n',
    })
  })

  it('names the setting folded into a message when the message itself is the same', () => {
    const session = new Session(SONNET, READ_TURN)
    const previous = session.request()
    const current = session.request({ tool_choice: { type: 'any' } })
    expect(session.changeOf(previous, current)).toEqual({
      node: 'messages[0].0',
      kind: 'field',
      field: 'tool_choice',
      after: '{"type":"any"}',
    })
  })

  it('masks a key in the changed text and in the text before it', () => {
    const key = `sk-${'a1B2c3D4'.repeat(4)}`
    const session = new Session({ ...SONNET, system: `Use ${key} for the API. Mode: fast.` }, READ_TURN)
    const previous = session.request()
    session.add(header({ ...SONNET, system: `Use ${key} for the API. Mode: careful.` }))
    const change = session.changeOf(previous)
    expect(change).toMatchObject({ kind: 'replaced', before: 'fast', after: 'careful' })
    expect(change?.context).toBe('Use [redacted] for the API. Mode: ')
    expect(JSON.stringify(change)).not.toContain('a1B2c3D4')
  })
})
