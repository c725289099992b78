import { describe, expect, it } from 'vitest'
import { pruneTargets, summarizerRequest, summaryMessage, summaryRange } from './compaction.ts'
import { deriveRequest } from './derive.ts'
import type { SessionPrefixPolicy } from './policies.ts'
import type { SessionProjection } from './session.ts'
import { say, type TestLoop, testLoop, withTool } from './testing.ts'
import type { Message, Seq } from './types.ts'

const typesOf = (session: SessionProjection, seqs: readonly Seq[]) =>
  seqs.map((seq) => session.event(seq).type)

/** A turn whose first step makes two tool calls, so two results follow one call node. */
const twoTools = (text: string) => ({
  kind: 'turn' as const,
  user: text,
  steps: [
    {
      toolCalls: [
        { name: 'read_file', arguments: { path: 'a.ts' }, result: 'A' },
        { name: 'read_file', arguments: { path: 'b.ts' }, result: 'B' },
      ],
    },
    { text: 'done' },
  ],
})

/** A loop that has run a tool turn, a plain turn and a two-call turn. */
async function conversation(options: Parameters<typeof testLoop>[0] = {}): Promise<TestLoop> {
  const test = testLoop(options)
  await test.loop.turn(withTool('read a'), test.world)
  await test.loop.turn(say('thanks'), test.world)
  await test.loop.turn(twoTools('read both'), test.world)
  return test
}

describe('summaryRange', () => {
  it('given a system head, when all but the last four nodes are summarized, then the range is everything between them', async () => {
    const { loop } = await conversation()
    const surface = loop.session.surface
    expect(typesOf(loop.session, surface)).toEqual([
      'system/message',
      'user/message',
      'assistant/message',
      'tool/result',
      'assistant/message',
      'user/message',
      'assistant/message',
      'user/message',
      'assistant/message',
      'tool/result',
      'tool/result',
      'assistant/message',
    ])
    expect(summaryRange(loop.session, 4)).toEqual(surface.slice(1, -4))
  })

  it('given the prompt in the header (no system node), when summarizing, then the range starts at the first node', async () => {
    const { loop } = await conversation({ policies: { systemPrompt: 'header' } })
    const surface = loop.session.surface
    expect(typesOf(loop.session, surface.slice(0, 1))).toEqual(['user/message'])
    expect(summaryRange(loop.session, 4)).toEqual(surface.slice(0, -4))
  })

  it('given a boundary that falls among tool results, then the range takes every result of the call it shadows', async () => {
    const { loop } = await conversation()
    const surface = loop.session.surface
    const lastCall = surface.at(-4) as Seq
    const [firstResult, secondResult, reply] = surface.slice(-3)
    expect(typesOf(loop.session, [lastCall, firstResult as Seq, secondResult as Seq, reply as Seq])).toEqual([
      'assistant/message',
      'tool/result',
      'tool/result',
      'assistant/message',
    ])
    // Retaining 3 or 2 nodes would start the retained part at a result; the range grows past both instead.
    expect(summaryRange(loop.session, 3)?.at(-1)).toBe(secondResult)
    expect(summaryRange(loop.session, 2)?.at(-1)).toBe(secondResult)
    expect(summaryRange(loop.session, 4)?.at(-1)).toBe(surface.at(-5))
  })

  it('never leaves a tool result as the first retained node, for any retained count', async () => {
    const { loop } = await conversation()
    const surface = loop.session.surface
    for (let retainNodes = 0; retainNodes <= surface.length; retainNodes += 1) {
      const range = summaryRange(loop.session, retainNodes)
      if (range === undefined) continue
      expect(range).toEqual(surface.slice(1, 1 + range.length))
      expect(surface.length - 1 - range.length).toBeLessThanOrEqual(retainNodes)
      const firstRetained = surface[1 + range.length]
      if (firstRetained !== undefined) expect(loop.session.event(firstRetained).type).not.toBe('tool/result')
    }
  })

  it('is undefined when every node after the system head is retained', async () => {
    const { loop, world } = testLoop()
    await loop.turn(say('a'), world)
    expect(loop.session.surface).toHaveLength(3)
    expect(summaryRange(loop.session, 2)).toBeUndefined()
    expect(summaryRange(loop.session, 3)).toBeUndefined()
    expect(summaryRange(loop.session, 1)).toEqual(loop.session.surface.slice(1, 2))
  })

  it('is undefined, not an error, when more nodes are retained than the surface holds', async () => {
    const { loop, world } = testLoop()
    await loop.turn(say('a'), world)
    expect(loop.session.surface).toHaveLength(3)
    expect(summaryRange(loop.session, 4)).toBeUndefined()
    expect(summaryRange(loop.session, 100)).toBeUndefined()
  })
})

describe('summarizerRequest', () => {
  it.each<SessionPrefixPolicy>(['off', 'frozen', 'after-slot', 'opener'])(
    'when replaying the prefix (session prefix %s), then the messages are the current request up to the range, then one instruction',
    async (sessionPrefix) => {
      const { loop, world } = await conversation({ policies: { sessionPrefix } })
      const shadowed = summaryRange(loop.session, 4) as Seq[]
      const current = deriveRequest(loop.session)
      const request = summarizerRequest(loop.session, shadowed, true, world.config)
      const replayed = request.messages.slice(0, -1)
      expect(replayed).toEqual(current.messages.slice(0, replayed.length))
      expect(replayed.at(-1)?.sourceSeqs).toEqual([shadowed.at(-1)])
      expect(request.messages.at(-1)).toEqual({
        message: { role: 'user', content: [{ type: 'text', text: expect.stringMatching(/^Summarize /) }] },
        sourceSeqs: [],
        origin: 'surface',
      })
      expect({ ...request, messages: [] }).toEqual({ ...current, messages: [] })
    },
  )

  it('when not replaying the prefix, then it sends its own system text, no tools, and the shadowed events as one transcript', async () => {
    const { loop, world } = await conversation()
    const shadowed = summaryRange(loop.session, 4) as Seq[]
    const config = { provider: 'deepseek' as const, model: 'summarizer' }
    const request = summarizerRequest(loop.session, shadowed, false, config)
    const instruction = summarizerRequest(loop.session, shadowed, true, world.config).messages.at(-1)
    const transcript = shadowed
      .map((seq) => loop.session.event(seq))
      .map((event) => `${event.type}: ${JSON.stringify(event.data)}`)
      .join('\n')

    expect(request.system?.text).toMatch(/\S/)
    expect(request.system?.text).not.toBe(world.system)
    expect(request.tools).toEqual([])
    expect(request.toolsSeq).toBeUndefined()
    expect(request.config).toEqual(config)
    expect(request.messages).toEqual([
      {
        message: {
          role: 'user',
          content: [{ type: 'text', text: `${transcript}\n\n${textOf(instruction?.message)}` }],
        },
        sourceSeqs: shadowed,
        origin: 'surface',
      },
    ])
  })
})

describe('summaryMessage', () => {
  it('wraps the summary in summary tags as one user text block', () => {
    expect(summaryMessage('The task.')).toEqual({
      role: 'user',
      content: [{ type: 'text', text: '<summary>\nThe task.\n</summary>' }],
    })
  })

  it('is the node a summary compaction puts in place of the range', async () => {
    const { loop, world, port } = await conversation()
    const surface = [...loop.session.surface]
    const shadowed = summaryRange(loop.session, 4) as Seq[]
    expect(await loop.compact(4, 20, world)).toBe(true)
    const summary = textOf(port.calls.at(-1)?.scripted)
    expect(summary).toMatch(/\S/)
    const node = loop.session.surface[1] as Seq
    expect(loop.session.surface).toEqual([surface[0], node, ...surface.slice(1 + shadowed.length)])
    expect(loop.session.event(node)).toMatchObject({
      type: 'user/message',
      data: { message: summaryMessage(summary) },
      sourceEventSeqs: shadowed,
    })
  })
})

describe('pruneTargets', () => {
  const everything = { keepChars: 4, skipLastNodes: 0 }

  it('targets results longer than the threshold in characters, not UTF-16 units', async () => {
    const { loop, world } = testLoop()
    for (const result of ['x'.repeat(10), 'x'.repeat(11), '😀'.repeat(10), '😀'.repeat(11)])
      await loop.turn(withTool('read', result), world)
    const results = loop.session.surface.filter((seq) => loop.session.event(seq).type === 'tool/result')
    expect(pruneTargets(loop.session, { ...everything, thresholdChars: 10 })).toEqual([
      results[1],
      results[3],
    ])
  })

  it('leaves the last skipLastNodes nodes alone', async () => {
    const { loop, world } = testLoop()
    await loop.turn(withTool('first', 'x'.repeat(50)), world)
    await loop.turn(withTool('second', 'y'.repeat(50)), world)
    const surface = loop.session.surface
    const [first, second] = surface.filter((seq) => loop.session.event(seq).type === 'tool/result')
    // The second result is the second-to-last node: its own turn's reply follows it.
    expect(surface.at(-2)).toBe(second)
    const targets = (skipLastNodes: number) =>
      pruneTargets(loop.session, { thresholdChars: 10, keepChars: 4, skipLastNodes })
    expect(targets(0)).toEqual([first, second])
    expect(targets(1)).toEqual([first, second])
    expect(targets(2)).toEqual([first])
    // The first result is the fourth node: skipping all but the first four keeps it a target.
    expect(surface.indexOf(first as Seq)).toBe(3)
    expect(targets(surface.length - 4)).toEqual([first])
    expect(targets(surface.length - 3)).toEqual([])
    expect(targets(surface.length + 5)).toEqual([])
  })

  it('targets only tool results, however long the other nodes are', async () => {
    const long = (letter: string) => letter.repeat(200)
    const { loop, world } = testLoop({ world: { system: long('s') } })
    await loop.turn(
      {
        kind: 'turn',
        user: long('u'),
        steps: [
          {
            text: long('a'),
            toolCalls: [{ name: 'read_file', arguments: { path: long('p') }, result: long('r') }],
          },
          { text: long('t') },
        ],
      },
      world,
    )
    loop.inject(long('i'), 'plugin')
    const results = loop.session.surface.filter((seq) => loop.session.event(seq).type === 'tool/result')
    expect(results).toHaveLength(1)
    expect(pruneTargets(loop.session, { ...everything, thresholdChars: 10 })).toEqual(results)
  })

  it('does not target a result a prune already cut to within the threshold', async () => {
    const { loop, world } = testLoop()
    await loop.turn(withTool('read', 'x'.repeat(500)), world)
    const options = { thresholdChars: 100, keepChars: 20, keep: 'head' as const, skipLastNodes: 0 }
    expect(loop.prune(options)).toBe(1)
    expect(pruneTargets(loop.session, options)).toEqual([])
  })

  it.each(['head', 'middle', 'tail'] as const)(
    'does not target a result a prune already cut, even when the cut is still over the threshold (keep %s)',
    async (keep) => {
      const { loop, world } = testLoop()
      await loop.turn(withTool('read', 'x'.repeat(500)), world)
      // The marker alone is longer than the threshold, so every cut result stays over it.
      const options = { thresholdChars: 10, keepChars: 8, keep, skipLastNodes: 0 }
      expect(loop.prune(options)).toBe(1)
      const [cut] = loop.session.surface.filter((seq) => loop.session.event(seq).type === 'tool/result')
      const event = loop.session.event(cut as Seq)
      expect(event.type === 'tool/result' && [...event.data.message.text].length).toBeGreaterThan(10)
      expect(pruneTargets(loop.session, options)).toEqual([])
    },
  )

  it('does not target a result no longer than what a cut keeps', async () => {
    const { loop, world } = testLoop()
    await loop.turn(withTool('read', 'x'.repeat(50)), world)
    expect(pruneTargets(loop.session, { ...everything, thresholdChars: 10, keepChars: 50 })).toEqual([])
    expect(pruneTargets(loop.session, { ...everything, thresholdChars: 10, keepChars: 49 })).toHaveLength(1)
  })
})

/** The text of a message's first block; '' when it has none. */
function textOf(message: Message | undefined): string {
  const block = message !== undefined && 'content' in message ? message.content[0] : undefined
  return block?.type === 'text' ? block.text : ''
}
