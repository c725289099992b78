import { describe, expect, it } from 'vitest'
import type { LlmCall } from './ports.ts'
import { planImageOffload, projectSystemPrompt, projectTools, pruneText } from './projections.ts'
import { resumeTestLoop, say, TEST_TOOLS, testLoop, withTool } from './testing.ts'
import type { DerivedMessage, ImageBlock, SessionEvent, ToolSchema } from './types.ts'

const messagesOf = (call: LlmCall | undefined) =>
  call?.request.messages.map((message: DerivedMessage) => message.message) ?? []
const headers = (events: SessionEvent[]) =>
  events.flatMap((event) => (event.type === 'request/header' ? [event] : []))
const systemEvents = (events: SessionEvent[]) =>
  events.flatMap((event) => (event.type === 'system/message' ? [event] : []))

describe('systemPrompt: header', () => {
  it('given a prompt in the header, when it changes, then a change header carries it and history has no system node', async () => {
    const { loop, world, events, port } = testLoop({ policies: { systemPrompt: 'header' } })
    await loop.turn(say('a'), world)
    world.system = 'New prompt.'
    await loop.turn(say('b'), world)
    expect(headers(events).map((event) => event.data.reason)).toEqual(['initial', 'change'])
    expect(systemEvents(events)).toHaveLength(0)
    expect(port.calls.at(-1)?.request.system?.text).toBe('New prompt.')
    expect(messagesOf(port.calls.at(-1))[0]).toMatchObject({ role: 'user' })
  })
})

describe('systemPrompt: surface, route: in-history', () => {
  it('given an in-history route, when the prompt changes, then a system/message is appended and no header is written', async () => {
    const { loop, world, events, port } = testLoop({ route: 'in-history' })
    await loop.turn(say('a'), world)
    const before = messagesOf(port.calls.at(-1))
    world.system = 'New prompt.'
    await loop.turn(say('b'), world)
    expect(headers(events).map((event) => event.data.reason)).toEqual(['initial'])
    const appended = systemEvents(events).at(-1)
    expect(appended?.surfaceOp).toBe('append')
    expect(appended?.data.message.text).toBe('New prompt.')
    const after = messagesOf(port.calls.at(-1))
    expect(after.slice(0, before.length)).toEqual(before)
  })
})

describe('systemPrompt: surface, route: unsupported', () => {
  it('given an unsupported route, when the prompt changes, then node 0 is replaced and the next header is series', async () => {
    const { loop, world, events, port } = testLoop({ route: 'unsupported' })
    await loop.turn(say('a'), world)
    const head = systemEvents(events)[0]
    world.system = 'New prompt.'
    await loop.turn(say('b'), world)
    const replacement = systemEvents(events).at(-1)
    expect(replacement?.surfaceOp).toEqual({ op: 'replace', startSeq: head?.seq, endSeq: head?.seq })
    expect(replacement?.sourceEventSeqs).toEqual([head?.seq])
    const last = headers(events).at(-1)
    expect(last?.data.reason).toBe('series')
    expect(messagesOf(port.calls.at(-1))[0]).toEqual({ role: 'system', text: 'New prompt.' })
  })
})

describe('adapterDefaults', () => {
  it('records the adapter-supplied output cap in config and flags it as the adapter default', async () => {
    const { loop, world, events, port } = testLoop({ adapterDefaults: { maxTokens: 4096 } })
    await loop.turn(say('a'), world)
    expect(headers(events)[0]?.data.header).toMatchObject({
      config: { provider: 'deepseek', model: 'deepseek-flash', maxTokens: 4096 },
      adapterDefaults: { maxTokens: true },
    })
    expect(port.calls[0]?.request.config.maxTokens).toBe(4096)
  })

  it('records no adapter default when the config names its own cap', async () => {
    const { loop, world, events } = testLoop({
      adapterDefaults: { maxTokens: 4096 },
      world: { config: { provider: 'anthropic', model: 'claude', maxTokens: 512 } },
    })
    await loop.turn(say('a'), world)
    const header = headers(events)[0]?.data.header
    expect(header?.config.maxTokens).toBe(512)
    expect(header).not.toHaveProperty('adapterDefaults')
  })

  it('writes a change header when the caller takes over a value the adapter supplied', async () => {
    const { loop, world, events } = testLoop({ adapterDefaults: { maxTokens: 4096 } })
    await loop.turn(say('a'), world)
    world.config = { ...world.config, maxTokens: 4096 }
    await loop.turn(say('b'), world)
    expect(headers(events).map((event) => event.data.reason)).toEqual(['initial', 'change'])
    expect(headers(events)[1]?.data.header).not.toHaveProperty('adapterDefaults')
  })
})

describe('request/context', () => {
  it.each([
    ['in-history', { provider: 'deepseek', model: 'deepseek-flash', systemPromptUpdate: 'in-history' }],
    ['unsupported', { provider: 'deepseek', model: 'deepseek-flash' }],
  ] as const)(
    'on an %s route records what DSH records: systemPromptUpdate, or its absence',
    async (route, data) => {
      const { loop, world, events } = testLoop({ route })
      await loop.turn(say('a'), world)
      const contexts = events.filter((event) => event.type === 'request/context')
      expect(contexts.map((event) => event.data)).toEqual([data])
    },
  )
})

describe('seriesStart after a tool-result prune with the rendering unchanged', () => {
  async function promptAppendedThenPruned(seriesStart: 'consolidate' | 'keep-live') {
    const { loop, world, events, port } = testLoop({ route: 'in-history', policies: { seriesStart } })
    await loop.turn(withTool('read', 'x'.repeat(2000)), world)
    world.system = 'Updated prompt.'
    await loop.turn(say('b'), world)
    const before = messagesOf(port.calls.at(-1))
    loop.prune({ thresholdChars: 100, keepChars: 50, keep: 'head', skipLastNodes: 2 })
    await loop.turn(say('c'), world)
    return { before, after: messagesOf(port.calls.at(-1)), events, port }
  }

  it('keep-live sends the previous messages unchanged up to the pruned node', async () => {
    const { before, after, events, port } = await promptAppendedThenPruned('keep-live')
    const replacementIndex =
      port.calls.at(-1)?.request.messages.findIndex((message) => message.message.role === 'tool') ?? -1
    expect(replacementIndex).toBeGreaterThan(1)
    expect(after[replacementIndex]).not.toEqual(before[replacementIndex])
    expect(after.slice(0, replacementIndex)).toEqual(before.slice(0, replacementIndex))
    expect(systemEvents(events).filter((event) => event.surfaceOp !== 'append')).toHaveLength(0)
    expect(headers(events).at(-1)?.data.reason).toBe('series')
  })

  it('consolidate rewrites node 0 and clears the appended prompt node', async () => {
    const { before, after, events } = await promptAppendedThenPruned('consolidate')
    expect(after[0]).toEqual({ role: 'system', text: 'Updated prompt.' })
    expect(before[0]).not.toEqual(after[0])
    const replacements = systemEvents(events).filter((event) => event.surfaceOp !== 'append')
    expect(replacements.map((event) => event.data.message.text)).toEqual(['', 'Updated prompt.'])
  })

  it('is a pure decision: keep-live skips when the latest live node already holds the rendering', () => {
    const nodes = [
      { seq: 1, text: 'old' },
      { seq: 9, text: 'new' },
    ]
    const input = { inHistory: true, startsSeries: true }
    expect(projectSystemPrompt(nodes, 'new', { ...input, seriesStart: 'keep-live' })).toEqual([])
    expect(projectSystemPrompt(nodes, 'new', { ...input, seriesStart: 'consolidate' })).toEqual([
      { kind: 'replace', seq: 9, text: '' },
      { kind: 'replace', seq: 1, text: 'new' },
    ])
    expect(projectSystemPrompt(nodes, 'newer', { ...input, seriesStart: 'keep-live' })).toHaveLength(2)
  })
})

describe('sessionPrefix', () => {
  it('off sends no prefix', async () => {
    const { loop, world, port } = testLoop()
    await loop.turn(say('a'), world)
    expect(port.calls[0]?.request.messages.some((message) => message.origin !== 'surface')).toBe(false)
  })

  it('frozen is composed once per instance, identical on every request, recorded in the header', async () => {
    const { loop, world, port, events } = testLoop({ policies: { sessionPrefix: 'frozen' } })
    await loop.turn(withTool('a'), world)
    world.prefixSource = 'skills: a, b, c'
    await loop.turn(say('b'), world)
    const prefixes = port.calls.map((call) =>
      call.request.messages.filter((message) => message.origin === 'session-prefix'),
    )
    expect(prefixes[0]?.length).toBe(1)
    for (const prefix of prefixes) expect(prefix).toEqual(prefixes[0])
    expect(port.calls[0]?.request.messages[1]?.origin).toBe('session-prefix')
    expect(headers(events)[0]?.data.header.messagePrefix).toEqual(
      prefixes[0]?.map((message) => message.message),
    )
    expect(headers(events)).toHaveLength(1)
  })

  it('frozen is recomposed after resume and the drift lands on the resume header', async () => {
    const first = testLoop({ policies: { sessionPrefix: 'frozen' } })
    await first.loop.turn(say('a'), first.world)
    first.world.prefixSource = 'skills: a, b, c'
    const resumed = resumeTestLoop(first)
    await resumed.turn(say('b'), first.world)
    const [initial, resume] = headers(first.events)
    expect(resume?.data.reason).toBe('resume')
    expect(JSON.stringify(resume?.data.header.messagePrefix)).toContain('skills: a, b, c')
    expect(JSON.stringify(initial?.data.header.messagePrefix)).not.toContain('skills: a, b, c')
  })

  it('after-slot is recomputed each step, sent after the history, and a change is a change header', async () => {
    const { loop, world, port, events } = testLoop({ policies: { sessionPrefix: 'after-slot' } })
    await loop.turn(say('a'), world)
    world.prefixSource = 'skills: a, b, c'
    await loop.turn(say('b'), world)
    for (const call of port.calls) expect(call.request.messages.at(-1)?.origin).toBe('after-slot')
    expect(headers(events).map((event) => event.data.reason)).toEqual(['initial', 'change'])
  })

  it.each(['frozen', 'after-slot', 'opener'] as const)(
    '%s composes nothing from an empty source: no header field, no message (seed 000)',
    async (sessionPrefix) => {
      const { loop, world, port, events } = testLoop({
        policies: { sessionPrefix },
        world: { prefixSource: '' },
      })
      await loop.turn(withTool('a'), world)
      const header = headers(events)[0]?.data.header
      expect(header).not.toHaveProperty('messagePrefix')
      expect(header).not.toHaveProperty('afterSlot')
      expect(events.filter((event) => event.type === 'user/message')).toHaveLength(1)
      for (const call of port.calls) {
        expect(call.request.messages.every((message) => message.origin === 'surface')).toBe(true)
        expect(JSON.stringify(call.request.messages)).not.toContain('session-context')
      }
    },
  )

  it('opener is durable history injected once after the system head and never refreshed', async () => {
    const { loop, world, port, events } = testLoop({ policies: { sessionPrefix: 'opener' } })
    await loop.turn(say('a'), world)
    world.prefixSource = 'changed'
    await loop.turn(say('b'), world)
    const openers = events.filter(
      (event) => event.type === 'user/message' && event.data.source.kind === 'plugin',
    )
    expect(openers).toHaveLength(1)
    expect(JSON.stringify(port.calls.at(-1)?.request.messages[1])).toContain('skills: a, b')
  })
})

const grep: ToolSchema = { name: 'grep', description: 'Search.', parameters: { type: 'object' } }

describe('toolUpdates', () => {
  it('unsupported declares the active set: an addition is a change header with new tools', async () => {
    const { loop, world, events } = testLoop({ toolUpdate: 'unsupported' })
    await loop.turn(say('a'), world)
    world.tools = [...TEST_TOOLS, grep]
    await loop.turn(say('b'), world)
    expect(headers(events).at(-1)?.data).toMatchObject({
      reason: 'change',
      header: { tools: [...TEST_TOOLS, grep] },
    })
    expect(events.some((event) => event.type === 'developer/message')).toBe(false)
  })

  it('addition-only keeps earlier declarations, defers the new tool and announces it in history', async () => {
    const { loop, world, events, port } = testLoop({ toolUpdate: 'addition-only' })
    await loop.turn(say('a'), world)
    world.tools = [...TEST_TOOLS, grep]
    await loop.turn(say('b'), world)
    expect(port.calls.at(-1)?.request.tools).toEqual([...TEST_TOOLS, { ...grep, deferLoading: true }])
    const update = events.find((event) => event.type === 'developer/message')
    expect(update?.type === 'developer/message' && update.data.message.text).toContain('added grep')
  })

  it.each(['addition-only', 'in-history'] as const)(
    '%s: the announcement of an addition names the earlier header that declares it (headerSeq)',
    async (toolUpdate) => {
      const { loop, world, events } = testLoop({ toolUpdate })
      await loop.turn(say('a'), world)
      world.tools = [...TEST_TOOLS, grep]
      await loop.turn(say('b'), world)
      const update = events.find((event) => event.type === 'developer/message')
      const headerSeq = update?.type === 'developer/message' ? update.data.headerSeq : undefined
      const header = events.find((event) => event.seq === headerSeq)
      expect(header?.type).toBe('request/header')
      expect(headerSeq).toBeLessThan(update?.seq ?? 0)
      expect(header?.type === 'request/header' && header.data.header.tools).toContainEqual({
        ...grep,
        deferLoading: true,
      })
    },
  )

  it('in-history: an announcement of removals only carries no headerSeq', async () => {
    const { loop, world, events } = testLoop({
      toolUpdate: 'in-history',
      world: { tools: [...TEST_TOOLS, grep] },
    })
    await loop.turn(say('a'), world)
    world.tools = TEST_TOOLS
    await loop.turn(say('b'), world)
    const update = events.find((event) => event.type === 'developer/message')
    expect(update?.type === 'developer/message' && update.data.message.text).toContain('removed grep')
    expect(update?.data).not.toHaveProperty('headerSeq')
  })

  it('addition-only drops a removed tool silently; in-history retires it and announces the removal', () => {
    const previous = { tools: [...TEST_TOOLS, grep], retired: [] }
    expect(projectTools(previous, TEST_TOOLS, 'addition-only')).toEqual({ tools: TEST_TOOLS, retired: [] })
    expect(projectTools(previous, TEST_TOOLS, 'in-history')).toEqual({
      tools: [...TEST_TOOLS, grep],
      retired: ['grep'],
      update: { added: [], removed: ['grep'] },
    })
    expect(
      projectTools({ tools: [...TEST_TOOLS, grep], retired: ['grep'] }, [...TEST_TOOLS, grep], 'in-history'),
    ).toEqual({
      tools: [...TEST_TOOLS, grep],
      retired: [],
      update: { added: [grep], removed: [] },
    })
  })
})

describe('compaction: summary', () => {
  it('replaces the range after the system head with one summary and starts a series', async () => {
    const { loop, world, events, port } = testLoop({ policies: { summaryReplayPrefix: true } })
    await loop.turn(withTool('a'), world)
    await loop.turn(say('b'), world)
    const lastStep = port.calls.at(-1)
    expect(await loop.compact(2, 50, world)).toBe(true)
    const summaryCall = port.calls.at(-1)
    expect(summaryCall?.purpose).toBe('summary')
    // Replaying the prefix: the summarizer request begins with the step request's messages.
    const replayed = messagesOf(summaryCall).slice(0, -1)
    expect(replayed).toEqual(messagesOf(lastStep).slice(0, replayed.length))
    const summary = events.find((event) => event.type === 'user/message' && event.surfaceOp !== 'append')
    expect(summary?.sourceEventSeqs?.length).toBeGreaterThan(1)
    await loop.turn(say('c'), world)
    expect(headers(events).at(-1)?.data.reason).toBe('series')
    expect(messagesOf(port.calls.at(-1))[1]).toMatchObject({ role: 'user' })
  })

  it('without replay, the summarizer call sends its own prompt and no tools', async () => {
    const { loop, world, port } = testLoop({ policies: { summaryReplayPrefix: false } })
    await loop.turn(withTool('a'), world)
    await loop.turn(say('b'), world)
    await loop.compact(1, 50, world)
    const summaryCall = port.calls.at(-1)
    expect(summaryCall?.request.tools).toEqual([])
    expect(summaryCall?.request.system?.text).toMatch(/summaries/)
    expect(summaryCall?.request.messages).toHaveLength(1)
  })
})

describe('compaction: tool-result prune', () => {
  it.each([
    ['head', /^a+\n\n\[\.\.\. tool result pruned \.\.\.\]\n\n$/],
    ['tail', /^\n\n\[\.\.\. tool result pruned \.\.\.\]\n\nb+$/],
    ['middle', /^a{8}\n\n\[\.\.\. tool result pruned \.\.\.\]\n\nb{2}$/],
  ] as const)('keeps the %s', (keep, shape) => {
    expect(pruneText(`${'a'.repeat(50)}${'b'.repeat(50)}`, 10, keep)).toMatch(shape)
  })

  it('leaves short results alone and replaces long ones in place', async () => {
    const { loop, world, events } = testLoop()
    await loop.turn(withTool('a', 'short'), world)
    await loop.turn(withTool('b', 'y'.repeat(500)), world)
    await loop.turn(say('c'), world)
    expect(loop.prune({ thresholdChars: 100, keepChars: 20, keep: 'head', skipLastNodes: 0 })).toBe(1)
    const replacement = events.filter((event) => event.type === 'tool/result').at(-1)
    expect(replacement?.surfaceOp).toMatchObject({ op: 'replace' })
    expect(events.some((event) => event.type === 'compaction/prune')).toBe(true)
  })

  it('prices each cut as DSH does: the shadowed range, its seqs and their token count, right before the replacement', async () => {
    const { loop, world, events } = testLoop()
    await loop.turn(withTool('b', 'y'.repeat(500)), world)
    await loop.turn(say('c'), world)
    const original = events.find((event) => event.type === 'tool/result')
    loop.prune({ thresholdChars: 100, keepChars: 20, keep: 'head', skipLastNodes: 0 })
    const price = events.find((event) => event.type === 'compaction/prune')
    expect(price?.data).toEqual({
      compactionId: 'compaction-1',
      shadowedRange: { start: original?.seq, end: original?.seq },
      shadowedSeqs: [original?.seq],
      shadowedTokenCount: 125,
      keep: 'head',
    })
    expect(events[(price?.seq ?? 0) + 1]?.sourceEventSeqs).toEqual([original?.seq])
  })
})

describe('compaction/summary', () => {
  it('records the shadowed range, seqs and token count of what the summary replaces', async () => {
    const { loop, world, events } = testLoop()
    await loop.turn(withTool('a', 'x'.repeat(400)), world)
    await loop.turn(say('b'), world)
    await loop.compact(1, 50, world)
    const summary = events.find((event) => event.type === 'compaction/summary')
    const replacement = events.find((event) => event.type === 'user/message' && event.surfaceOp !== 'append')
    const shadowed = replacement?.sourceEventSeqs ?? []
    expect(summary?.type === 'compaction/summary' && summary.data).toMatchObject({
      shadowedRange: { start: shadowed[0], end: shadowed.at(-1) },
      shadowedSeqs: shadowed,
    })
    const count = summary?.type === 'compaction/summary' ? (summary.data.shadowedTokenCount ?? 0) : 0
    // The 400-character tool result alone is 100 tokens; the user, call and answer add a few more.
    expect(count).toBeGreaterThan(100)
    expect(count).toBeLessThan(130)
  })
})

describe('image offload', () => {
  const images = (count: number) =>
    Array.from({ length: count }, (_, index) => ({ seq: 10 + index, id: `img-${index}` }))

  it('per-request removes just the excess, so the removed prefix moves with every upload', () => {
    expect(planImageOffload(images(21), 20, 10, 'per-request').map((target) => target.imageIds)).toEqual([
      ['img-0'],
    ])
    expect(planImageOffload(images(22), 20, 10, 'per-request')).toHaveLength(2)
  })

  it('quantized removes whole quanta, so the removed prefix holds until the next quantum', () => {
    expect(planImageOffload(images(21), 20, 10, 'quantized')).toHaveLength(10)
    expect(planImageOffload(images(20), 20, 10, 'quantized')).toEqual([])
  })

  it('commits an image/offload event and the offloaded images become placeholders', async () => {
    const { loop, world, events, port } = testLoop({
      policies: { imageLimit: 2, imageQuantum: 2, imageOffload: 'quantized' },
    })
    const image = (id: string): ImageBlock => ({
      type: 'image',
      id,
      mediaType: 'image/png',
      data: 'AAAA',
      width: 8,
      height: 8,
    })
    for (const id of ['a', 'b', 'c'])
      await loop.turn({ kind: 'turn', user: [image(id)], steps: [{ text: 'ok' }] }, world)
    const offload = events.find((event) => event.type === 'image/offload')
    expect(
      offload?.type === 'image/offload' && offload.data.targets.flatMap((target) => target.imageIds),
    ).toEqual(['a', 'b'])
    expect(JSON.stringify(port.calls.at(-1)?.request.messages)).toContain('[image a omitted')
    expect(headers(events).at(-1)?.data.reason).toBe('series')
  })
})
