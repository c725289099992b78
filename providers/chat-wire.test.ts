import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { identicalPrefix } from '../harness/lineage.ts'
import type { DerivedMessage, DerivedRequest, Message } from '../harness/types.ts'
import { chatMessages } from './chat-wire.ts'
import { assistantText, derivedRequest, surfaceMessage, userText } from './testing.ts'

type Role = 'developer' | 'system'
const request = (messages: DerivedMessage[], system?: { text: string; sourceSeq: number }) =>
  derivedRequest(
    { provider: 'openai-chat', model: 'gpt-5.4' },
    messages,
    system === undefined ? {} : { system },
  )
const header = { text: 'You are terse.', sourceSeq: 1 }

/** A build by a freshly loaded chat-wire module, which remembers no earlier build. */
async function freshBuild(derived: DerivedRequest, role: Role) {
  vi.resetModules()
  const { chatMessages: fresh } = await import('./chat-wire.ts')
  return fresh(derived, role)
}

const image = {
  type: 'image',
  id: 'img-1',
  mediaType: 'image/png',
  data: 'iVBORw0K',
  width: 8,
  height: 8,
} as const
const grep = { type: 'tool-call', callId: 'call_1', name: 'grep', arguments: '{"pattern":"x"}' } as const
const read = { type: 'tool-call', callId: 'call_2', name: 'read', arguments: '{}' } as const

describe('chatMessages: one wire message per derived message', () => {
  const history = [
    surfaceMessage({ role: 'system', text: 'Mind the repo.' }, 2),
    surfaceMessage({ role: 'developer', text: 'Tool grep added.' }, 3),
    userText('hi', 4),
    surfaceMessage({ role: 'user', content: [{ type: 'text', text: 'See:' }, image] }, 5),
    surfaceMessage(
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Look' }, { type: 'text', text: 'ing.' }, grep, read],
      },
      6,
    ),
    surfaceMessage({ role: 'tool', callId: 'call_1', name: 'grep', text: 'none' }, 7),
    surfaceMessage({ role: 'tool', callId: 'call_2', name: 'read', text: 'ENOENT', isError: true }, 8),
    surfaceMessage({ role: 'assistant', content: [grep] }, 9),
  ]

  it('shapes each role the Chat way, the header prompt first, sources aligned index by index', () => {
    const { messages, sources } = chatMessages(request(history, header), 'developer')
    expect(messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'system', content: 'Mind the repo.' },
      { role: 'developer', content: 'Tool grep added.' },
      { role: 'user', content: 'hi' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'See:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'grep', arguments: '{"pattern":"x"}' } },
          { id: 'call_2', type: 'function', function: { name: 'read', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'none' },
      { role: 'tool', tool_call_id: 'call_2', content: 'ENOENT' },
      { role: 'assistant', content: null, tool_calls: [expect.objectContaining({ id: 'call_1' })] },
    ])
    expect(sources).toEqual([[1], [2], [3], [4], [5], [6], [7], [8], [9]])
  })

  it('sends developer messages as system when the API has no developer role', () => {
    const { messages } = chatMessages(request(history.slice(0, 3)), 'system')
    expect(messages.map((message) => message.role)).toEqual(['system', 'system', 'user'])
  })

  it('sends a lone image as a one-part array and an assistant without tool calls without the key', () => {
    const { messages, sources } = chatMessages(
      request([
        { ...surfaceMessage({ role: 'user', content: [image] }, 3), sourceSeqs: [2, 3] },
        assistantText('Nice.', 4),
      ]),
      'developer',
    )
    expect(messages[0]).toEqual({
      role: 'user',
      content: [{ type: 'image_url', image_url: expect.any(Object) }],
    })
    expect(messages[1]).toStrictEqual({ role: 'assistant', content: 'Nice.' })
    expect(sources).toEqual([[2, 3], [4]])
  })
})

describe('chatMessages: a session prefix is converted once', () => {
  const turns = [userText('one', 2), assistantText('two', 3), userText('three', 4)]

  it('reuses request N wire messages by identity in request N+1, equal to a fresh build', async () => {
    const first = chatMessages(request(turns, header), 'developer')
    const snapshot = structuredClone(first)
    const next = request([...turns, assistantText('four', 5), userText('five', 6)], header)
    const second = chatMessages(next, 'developer')
    for (const [index, message] of first.messages.entries()) expect(second.messages[index]).toBe(message)
    expect(second).toEqual(await freshBuild(next, 'developer'))
    expect(first).toEqual(snapshot)
  })

  it('rebuilds from the first derived message that is not the same object', async () => {
    const first = chatMessages(request(turns, header), 'developer')
    const next = request([turns[0] as DerivedMessage, assistantText('TWO', 3), userText('three', 4)], header)
    const second = chatMessages(next, 'developer')
    expect(second.messages.slice(0, 2)).toEqual(first.messages.slice(0, 2))
    expect(second.messages[1]).toBe(first.messages[1])
    expect(second.messages[2]).toEqual({ role: 'assistant', content: 'TWO' })
    expect(second).toEqual(await freshBuild(next, 'developer'))
  })

  it('keeps the wire message of a message re-derived in a new wrapper, with the new sources', () => {
    const note: Message = { role: 'user', content: [{ type: 'text', text: 'prefix' }] }
    const first = chatMessages(request([surfaceMessage(note, 1)]), 'developer')
    const second = chatMessages(request([surfaceMessage(note, 9)]), 'developer')
    expect(second.messages[0]).toBe(first.messages[0])
    expect(second.sources).toEqual([[9]])
  })

  it('starts over when the developer role or the header prompt changes', async () => {
    const developer = [surfaceMessage({ role: 'developer', text: 'Tool grep added.' }, 2), ...turns]
    chatMessages(request(developer, header), 'developer')
    const asSystem = chatMessages(request(developer, header), 'system')
    expect(asSystem.messages[1]).toEqual({ role: 'system', content: 'Tool grep added.' })
    const renamed = request(developer, { text: 'You are verbose.', sourceSeq: 5 })
    const changed = chatMessages(renamed, 'system')
    expect(changed.messages[0]).toEqual({ role: 'system', content: 'You are verbose.' })
    expect(changed).toEqual(await freshBuild(renamed, 'system'))
  })

  it('equals a fresh build after any sequence of builds', async () => {
    const pool = [
      ...turns,
      surfaceMessage({ role: 'developer', text: 'Tool added.' }, 5),
      assistantText('six', 6),
    ]
    const systems = [
      undefined,
      { text: 'A', sourceSeq: 1 },
      { text: 'A', sourceSeq: 3 },
      { text: 'B', sourceSeq: 2 },
    ]
    const step = fc.record({
      keep: fc.nat(6),
      add: fc.array(fc.nat(pool.length - 1), { maxLength: 3 }),
      role: fc.constantFrom<Role>('developer', 'system'),
      system: fc.constantFrom(...systems),
    })
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 5 }), async (steps) => {
        let messages: DerivedMessage[] = []
        for (const { keep, add, role, system } of steps) {
          messages = [...messages.slice(0, keep), ...add.map((index) => pool[index] as DerivedMessage)]
          const derived = request(messages, system)
          const built = chatMessages(derived, role)
          expect(built.messages).toHaveLength(built.sources.length)
          expect(built).toEqual(await freshBuild(derived, role))
        }
      }),
      { numRuns: 40, seed: 7 },
    )
  })

  it('claims no more of the previous list than it shares (so later stages may skip comparing it)', () => {
    const pool = [
      ...turns,
      surfaceMessage({ role: 'developer', text: 'Tool added.' }, 5),
      assistantText('six', 6),
    ]
    const step = fc.record({
      keep: fc.nat(6),
      add: fc.array(fc.nat(pool.length - 1), { maxLength: 3 }),
      system: fc.constantFrom(undefined, { text: 'A', sourceSeq: 1 }, { text: 'B', sourceSeq: 2 }),
    })
    fc.assert(
      fc.property(fc.array(step, { minLength: 2, maxLength: 6 }), (steps) => {
        let messages: DerivedMessage[] = []
        let previous: readonly unknown[] | undefined
        for (const { keep, add, system } of steps) {
          // A rewrite keeps the derived prefix and replaces the rest with other objects.
          messages = [
            ...messages.slice(0, keep),
            ...add.map((index) => ({ ...(pool[index] as DerivedMessage) })),
          ]
          const built = chatMessages(request(messages, system), 'developer').messages
          if (previous !== undefined) {
            // Compared against objects it cannot share, the prefix found is exactly what the list claims.
            const strangers = previous.map(() => ({}))
            const claimed = identicalPrefix(built, strangers, previous)
            let shared = 0
            while (shared < Math.min(built.length, previous.length) && built[shared] === previous[shared])
              shared += 1
            expect(claimed).toBeLessThanOrEqual(shared)
          }
          previous = built
        }
      }),
      { numRuns: 200, seed: 11 },
    )
  })

  it('attributes an unchanged header prompt to the header of the request being built', async () => {
    chatMessages(request(turns, { text: 'Same.', sourceSeq: 1 }), 'developer')
    const next = request(turns, { text: 'Same.', sourceSeq: 7 })
    const built = chatMessages(next, 'developer')
    expect(built.sources[0]).toEqual([7])
    expect(built).toEqual(await freshBuild(next, 'developer'))
  })

  it('reuses the header and history by identity when the header text and source both match', () => {
    const first = chatMessages(request(turns, { text: 'Same.', sourceSeq: 7 }), 'developer')
    const second = chatMessages(request(turns, { text: 'Same.', sourceSeq: 7 }), 'developer')
    for (const [index, message] of first.messages.entries()) expect(second.messages[index]).toBe(message)
    expect(second.sources).toEqual([[7], [2], [3], [4]])
  })
})
