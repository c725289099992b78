import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { dshProvider, dshUsage, readDsh } from './dsh.ts'
import type { ObservedRequest, ReadOptions, TranscriptProblem } from './types.ts'

const testdata = (name: string) => fileURLToPath(new URL(`testdata/${name}`, import.meta.url))
const samples = fileURLToPath(new URL('../../../../shared/fixtures/transcripts/', import.meta.url))

interface Read {
  requests: ObservedRequest[]
  problems: TranscriptProblem[]
  notes: TranscriptProblem[]
}

async function read(file: string, lenient = false): Promise<Read> {
  const result: Read = { requests: [], problems: [], notes: [] }
  const options: ReadOptions = {
    lenient,
    onProblem: (problem) => result.problems.push(problem),
    onNote: (note) => result.notes.push(note),
  }
  for await (const request of readDsh(file, options)) result.requests.push(request)
  return result
}

const messagesOf = (request: ObservedRequest | undefined) =>
  (request?.request?.body.messages ?? []) as Array<Record<string, unknown>>

describe('DSH usage', () => {
  it('is already disjoint: input is uncached plus read plus written, and a missing count stays unreported', () => {
    const raw = { inputTokens: 94, outputTokens: 19, cacheReadTokens: 384, reasoningTokens: 3 }
    expect(dshUsage(raw)).toEqual({ input: 478, uncached: 94, cacheRead: 384, output: 19, reasoning: 3, raw })
    expect(dshUsage({ inputTokens: 5, outputTokens: 1, cacheWriteTokens: 7 })).toMatchObject({
      input: 12,
      cacheWrite: 7,
    })
    expect(dshUsage({ inputTokens: 5, outputTokens: 1 })?.cacheRead).toBeUndefined()
    expect(dshUsage({ outputTokens: 1 })).toBeUndefined()
  })
})

describe('a DSH provider route', () => {
  it("is DeepSeek unless it names pi-ai's Anthropic or OpenAI route", () => {
    expect(dshProvider('deepseek-official')).toBe('deepseek')
    expect(dshProvider('acme-gateway')).toBe('deepseek')
    expect(dshProvider(undefined)).toBe('deepseek')
    expect(dshProvider('anthropic')).toBe('anthropic')
    expect(dshProvider('openai')).toBe('openai-responses')
  })
})

describe('a DSH session log', () => {
  it('yields one request per assistant message with usage, and one for a summarizer call', async () => {
    const { requests, problems } = await read(testdata('dsh-session.jsonl'))
    expect(problems).toEqual([])
    expect(requests.map((request) => [request.session, request.turn, request.step])).toEqual([
      ['5a0c6a52-3f1e-4d0b-9a53-0c1f7d2e4b10', 1, 1],
      ['5a0c6a52-3f1e-4d0b-9a53-0c1f7d2e4b10', 1, 2],
      ['5a0c6a52-3f1e-4d0b-9a53-0c1f7d2e4b10', 2, 1],
      ['5a0c6a52-3f1e-4d0b-9a53-0c1f7d2e4b10.compaction', undefined, undefined],
      ['5a0c6a52-3f1e-4d0b-9a53-0c1f7d2e4b10', 3, 1],
      ['5a0c6a52-3f1e-4d0b-9a53-0c1f7d2e4b10', 4, 1],
    ])
    const [first, second] = requests
    expect(first).toMatchObject({
      format: 'dsh',
      source: `${testdata('dsh-session.jsonl')}:15`,
      provider: 'deepseek',
      model: 'deepseek-v4-flash',
      requestId: '7d1e0a64-asst-0001',
      usage: { input: 401, uncached: 401, cacheRead: 0, output: 38, reasoning: 14 },
    })
    // A request starts when its response begins to stream, not when the message is saved.
    expect(first?.time).toBe('2026-09-21T14:13:20.700Z')
    expect(second?.usage).toMatchObject({ input: 478, cacheRead: 384, uncached: 94 })
    expect(requests[3]).toMatchObject({
      parent: '5a0c6a52-3f1e-4d0b-9a53-0c1f7d2e4b10',
      model: 'deepseek-v4-pro',
    })
  })

  it('gives each request the events since the previous one: header changes, model switch, compaction, resume', async () => {
    const { requests } = await read(testdata('dsh-session.jsonl'))
    expect(requests.map((request) => request.events)).toEqual([
      [],
      [],
      [
        { kind: 'tools-change', detail: 'added read_sensor' },
        { kind: 'config-change', detail: 'reasoningEffort "high" → "max"' },
        { kind: 'model-switch', from: 'deepseek-v4-flash', to: 'deepseek-v4-pro' },
      ],
      [],
      [
        {
          kind: 'compaction',
          cause: 'compaction-summary',
          detail: 'summary of 4 surface nodes (about 180 tokens)',
        },
      ],
      [
        { kind: 'resume', detail: 'a new loop instance resumed the log' },
        { kind: 'system-change', detail: '414 → 465 characters, first difference at character 414' },
      ],
    ])
  })

  it('rebuilds each request body from the header and the surface before its answer', async () => {
    const { requests } = await read(testdata('dsh-session.jsonl'))
    const [first, second, third, summary, compacted, resumed] = requests
    expect(first?.request?.api).toBe('deepseek-chat')
    expect(first?.request?.body).toMatchObject({
      model: 'deepseek-v4-flash',
      thinking: { type: 'enabled' },
      reasoning_effort: 'high',
      stream: true,
    })
    expect(first?.request?.body.tools).toHaveLength(2)
    expect(messagesOf(first).map((message) => message.role)).toEqual(['system', 'user'])
    expect(messagesOf(second).map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool'])
    expect(messagesOf(second)[2]).toMatchObject({ content: '', reasoning_content: expect.any(String) })
    expect(third?.request?.body.tools).toHaveLength(3)
    expect(summary?.request).toBeUndefined()
    // The compaction replaced turn 1's four nodes with one summary message.
    expect(messagesOf(compacted).map((message) => message.role)).toEqual([
      'system',
      'user',
      'user',
      'assistant',
      'user',
    ])
    expect(String(messagesOf(compacted)[1]?.content)).toMatch(/^Checkpoint/)
    expect(String(messagesOf(resumed)[0]?.content)).toMatch(/rainy day/)
    expect(first?.request?.estimated).toMatch(/serialized as deepseek-harness b150a551/)
    expect(second?.answer).toEqual({
      message: { role: 'assistant', content: [{ type: 'text', text: expect.stringMatching(/^Basil/) }] },
    })
    expect(first?.answer?.reasoning).toMatch(/read it/)
  })

  it('reads the same requests from its zstd-compressed copy', async () => {
    const plain = await read(testdata('dsh-session.jsonl'))
    const compressed = await read(testdata('dsh-session.jsonl.zstd'))
    const withoutSource = (requests: ObservedRequest[]) =>
      requests.map(({ source, ...rest }) => ({ line: source.split(':').at(-1), ...rest }))
    expect(withoutSource(compressed.requests)).toEqual(withoutSource(plain.requests))
  })

  it('numbers events without seq (snapshots), packed rows by their members, and names a session by its file', async () => {
    const { requests, notes } = await read(testdata('dsh-snapshot.jsonl'))
    expect(notes).toEqual([])
    expect(requests.map((request) => request.session)).toEqual(['dsh-snapshot', 'dsh-snapshot'])
    // The prune replaced the tool result at inferred seq 10 with an empty one.
    expect(messagesOf(requests[1]).at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_wc',
      content: '(no output)',
    })
    expect(requests[1]?.events).toEqual([
      {
        kind: 'compaction',
        cause: 'compaction-summary',
        detail: 'prune of 1 surface node (about 120 tokens)',
      },
    ])
    expect(requests[1]?.request?.estimated).toMatch(/placeholder/)
    expect(requests[1]?.time).toBe(new Date(0).toISOString())
    expect(requests[1]?.usage.cacheRead).toBeUndefined()
  })

  it('reads a generation C log (format 3): the prompt as system/message nodes, replaced by startSeq/endSeq', async () => {
    const { requests, problems } = await read(testdata('dsh-c-consolidate.jsonl'))
    expect(problems).toEqual([])
    expect(requests.map((request) => [request.turn, request.step])).toEqual([
      [1, 1],
      [1, 2],
      [2, 1],
      [2, 2],
      [3, 1],
      [4, 1],
      [5, 1],
      [6, 1],
    ])
    const roles = (request: ObservedRequest | undefined) => messagesOf(request).map((message) => message.role)
    // Turn 2 appended the changed prompt after the cached history.
    expect(roles(requests[2])).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'system', 'user'])
    // Turn 4's series start cleared that node (it sends nothing) and rewrote node 0 to the same prompt.
    const consolidated = messagesOf(requests[5])
    expect(consolidated.filter((message) => message.role === 'system')).toHaveLength(1)
    expect(consolidated[0]?.content).toBe(messagesOf(requests[2])[5]?.content)
    expect(String(consolidated[0]?.content)).toMatch(/Build update/)
    // Turn 6's compaction names the cleared node's replacement as the end of its range.
    expect(messagesOf(requests[7])[1]?.content).toMatch(/^Checkpoint/)
    expect(requests.every((request) => request.rederived === undefined)).toBe(true)
  })

  it("folds a fork's seed into the surface but counts none of its usage", async () => {
    const { requests } = await read(testdata('dsh-fork.jsonl'))
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({
      session: 'b7e2a9c4-1d3f-4e5a-8b6c-7d8e9f0a1b2c',
      parent: '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0',
      usage: { input: 57, cacheRead: 45 },
      events: [{ kind: 'resume', detail: 'a new loop instance resumed the log' }],
    })
    expect(messagesOf(requests[0]).map((message) => message.content)).toEqual([
      'You fold paper cranes.',
      'How many folds in a crane?',
      'About twenty.',
      'And a frog?',
    ])
  })

  it('fails on a broken line naming file and line, or under lenient reports it and reads on', async () => {
    const file = testdata('dsh-torn.jsonl')
    await expect(read(file)).rejects.toThrow(`${file}:4: not JSON`)
    const { requests, problems } = await read(file, true)
    expect(problems.map((problem) => problem.where)).toEqual([`${file}:4`])
    expect(requests.map((request) => request.usage.input)).toEqual([8])
  })
})

// The real samples (see ../shared/fixtures/transcripts/SOURCES.md) are others' data, read in place; CI's
// clean clone has none. The expected sums are the independent jq count of notes/2026-11-30-import-dsh-pi.md.
describe.skipIf(!existsSync(samples))('the real DSH samples', () => {
  const expected: Record<string, { requests: number; uncached: number; read: number; output: number }> = {
    'dsh-deepseek-ai-advanced-toolchain.jsonl': { requests: 6, uncached: 18, read: 0, output: 18 },
    'dsh-deepseek-ai-compaction-recovery.jsonl': { requests: 3, uncached: 64, read: 0, output: 14 },
    'dsh-deepseek-ai-goal-multi-turn-actions.jsonl': {
      requests: 12,
      uncached: 10012,
      read: 103040,
      output: 2384,
    },
    'dsh-deepseek-ai-permission-policy-context.jsonl': {
      requests: 7,
      uncached: 1338,
      read: 106752,
      output: 838,
    },
    'dsh-getagentseal-bash-tool-turn.jsonl': { requests: 2, uncached: 3045, read: 2816, output: 115 },
  }

  it.each(Object.keys(expected))(
    '%s reads without a problem, to the independently counted sums',
    async (name) => {
      const { requests, problems, notes } = await read(`${samples}${name}`)
      expect(problems).toEqual([])
      expect(notes).toEqual([])
      const sum = (pick: (request: ObservedRequest) => number) =>
        requests.reduce((total, request) => total + pick(request), 0)
      expect({
        requests: requests.length,
        uncached: sum((request) => request.usage.uncached),
        read: sum((request) => request.usage.cacheRead ?? 0),
        output: sum((request) => request.usage.output),
      }).toEqual(expected[name])
      for (const request of requests) {
        expect(request.usage.input).toBe(request.usage.uncached + (request.usage.cacheRead ?? 0))
        // Every conversation request has its body; a summarizer call has none.
        expect(request.request === undefined).toBe(request.session.endsWith('.compaction'))
      }
    },
  )
})
