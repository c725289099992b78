import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CodexReading, parseCodexUsage, readCodex } from './codex.ts'
import { type JsonRecord, readJsonRecords } from './lines.ts'
import type { ObservedRequest, TranscriptProblem } from './types.ts'

const testdata = (name: string) => join(import.meta.dirname, 'testdata', name)
const SAMPLES = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'fixtures', 'transcripts')

async function read(file: string, lenient = false) {
  const requests: ObservedRequest[] = []
  const problems: TranscriptProblem[] = []
  for await (const request of readCodex(file, { lenient, onProblem: (p) => problems.push(p) }))
    requests.push(request)
  return { requests, problems }
}

const line = (request: ObservedRequest | undefined) => Number(request?.source.split(':').pop())

describe('parseCodexUsage', () => {
  it('takes cached tokens out of the input and keeps reasoning inside the output', () => {
    const raw = {
      input_tokens: 5000,
      cached_input_tokens: 4096,
      output_tokens: 300,
      reasoning_output_tokens: 200,
    }
    expect(parseCodexUsage(raw)).toEqual({
      input: 5000,
      uncached: 904,
      cacheRead: 4096,
      output: 300,
      reasoning: 200,
      raw,
    })
  })

  it('reports no writes unless the record has cache_write_input_tokens, a third part of the input', () => {
    expect(parseCodexUsage({ input_tokens: 10, output_tokens: 1 }).cacheWrite).toBeUndefined()
    const usage = parseCodexUsage({
      input_tokens: 5000,
      cached_input_tokens: 3000,
      cache_write_input_tokens: 1500,
      output_tokens: 20,
    })
    expect([usage.cacheRead, usage.cacheWrite, usage.uncached]).toEqual([3000, 1500, 500])
  })
})

describe('readCodex', () => {
  it('reads one request per token_count whose running total moved', async () => {
    const { requests } = await read(testdata('codex-basic.jsonl'))
    // Line 5 only updates rate limits; line 7 repeats line 6's total.
    expect(requests.map(line)).toEqual([6, 9, 12, 15, 18])
    expect(requests.map((request) => request.usage.input)).toEqual([3000, 3500, 4000, 2500, 2700])
    expect(requests[1]?.usage).toMatchObject({
      input: 3500,
      uncached: 556,
      cacheRead: 2944,
      output: 60,
      reasoning: 10,
    })
    expect(requests[0]).toMatchObject({
      format: 'codex',
      provider: 'openai-responses',
      session: '0199aaaa-0000-7000-8000-000000000001',
      model: 'gpt-5-codex',
      time: '2026-02-01T09:00:04.000Z',
    })
  })

  it('takes the difference of running totals where last_token_usage is missing', async () => {
    const { requests } = await read(testdata('codex-basic.jsonl'))
    expect(requests[3]?.usage).toMatchObject({
      input: 2500,
      uncached: 1476,
      cacheRead: 1024,
      output: 40,
      reasoning: 8,
    })
  })

  it('counts turns from user messages and steps within them', async () => {
    const { requests } = await read(testdata('codex-basic.jsonl'))
    expect(requests.map((request) => [request.turn, request.step])).toEqual([
      [1, 1],
      [1, 2],
      [2, 1],
      [2, 2],
      [2, 3],
    ])
  })

  it('tells what changed before each request: settings, model, compaction, a new header, instructions', async () => {
    const { requests } = await read(testdata('codex-basic.jsonl'))
    expect(requests.map((request) => request.events)).toEqual([
      [],
      [],
      [
        { kind: 'config-change', detail: 'effort high → medium' },
        { kind: 'model-switch', from: 'gpt-5-codex', to: 'gpt-5.1-codex' },
      ],
      [{ kind: 'compaction', detail: 'compacted' }],
      [
        { kind: 'resume', detail: 'session header written again' },
        { kind: 'system-change', detail: 'user_instructions changed' },
      ],
    ])
  })

  it.each([
    ['codex-fork-child.jsonl', 'rewritten to the moment of the fork'],
    ['codex-fork-child-kept-times.jsonl', 'kept from before the child started'],
  ])(
    'gives a fork child’s copy of its parent’s requests as copies, then its own (%s: copied times %s)',
    async (name) => {
      const { requests } = await read(testdata(name))
      const own = requests.filter((request) => request.copied === undefined)
      expect(own.map(line)).toEqual([9, 10])
      expect(own.map((request) => [request.session, request.parent])).toEqual([
        ['child-0001', 'parent-0001'],
        ['child-0001', 'parent-0001'],
      ])
      expect(own[0]?.events).toEqual([{ kind: 'resume', detail: 'forked from parent-0001' }])
      expect(own[0]?.usage).toMatchObject({ input: 3000, cacheRead: 2560 })
      // The parent's two requests, as the copy recorded them: the child's first own goes on from the last.
      expect(
        requests.slice(0, 2).map((request) => [line(request), request.copied, request.usage.input]),
      ).toEqual([
        [5, { from: 'parent-0001' }, 2000],
        [6, { from: 'parent-0001' }, 2600],
      ])
    },
  )
})

describe('readCodex on Codex 0.169 (a session of ours against serve: four turns, a switch, compactions, a spawned agent)', () => {
  const MAIN = '01a2342b-a985-72c2-833f-9035c715cc8a'
  const CHILD = '01a2342b-c479-7401-9325-eb9832382357'
  const usage = (request: ObservedRequest) =>
    `${request.model} ${request.usage.input}/${request.usage.cacheRead ?? 0}/${request.usage.output}`

  it('opens a turn at each UserMessage item, a tool result or notification none', async () => {
    const { requests } = await read(testdata('codex-0169-session.jsonl'))
    const main = requests.filter((request) => request.session === MAIN)
    expect(main.map((request) => [request.turn, request.step])).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
      [4, 1],
      [4, 2],
      [4, 3],
      [4, 4],
    ])
  })

  it('puts each compaction request in a conversation of its own, numbered in order, on the model of the turn it compacts for', async () => {
    const { requests } = await read(testdata('codex-0169-session.jsonl'))
    const compactions = requests.filter((request) => request.kind === 'compaction')
    expect(
      compactions.map((request) => [request.session, request.parent, request.turn, usage(request)]),
    ).toEqual([
      // Before turn 4, after turn 3 ran on gpt-5.4-mini: Codex sent it on turn 4's gpt-5.4.
      [`${MAIN}.compaction-1`, MAIN, 1, 'gpt-5.4 7898/0/8'],
      [`${MAIN}.compaction-2`, MAIN, 1, 'gpt-5.4 8015/3456/8'],
    ])
    expect(compactions.map((request) => request.requestId)).toEqual(['resp_sim000007', 'resp_sim000012'])
    // The compaction request sent the history before its own answer; Codex's instruction is not on disk.
    expect(compactions[0]?.request?.estimated).toContain('compaction instruction')
  })

  it('keeps every main request on its model, the switch back told once to the next main request', async () => {
    const { requests } = await read(testdata('codex-0169-session.jsonl'))
    const main = requests.filter((request) => request.session === MAIN)
    expect(main.map(usage)).toEqual([
      'gpt-5.4 7829/0/6',
      'gpt-5.4 7844/7808/6',
      'gpt-5.4-mini 11412/0/6',
      'gpt-5.4 11489/7040/14',
      'gpt-5.4 7974/7040/11',
      'gpt-5.4 8039/7936/2',
      'gpt-5.4 8087/7936/2',
    ])
    expect(main[3]?.events).toEqual([
      { kind: 'compaction', detail: 'compacted' },
      { kind: 'model-switch', from: 'gpt-5.4-mini', to: 'gpt-5.4' },
    ])
    expect(requests.every((request) => request.agent === 'codex/0.169.0')).toBe(true)
    // Each body is the items its request sent: the first a context message, the environment and the prompt.
    expect(main.map((request) => ((request.request?.body.input ?? []) as unknown[]).length)).toEqual([
      3, 5, 8, 7, 7, 9, 11,
    ])
    expect(main.every((request) => request.request?.withoutTools === true)).toBe(true)
  })

  it('reads a spawned agent’s rollout as a subagent of the root session, sending the root’s cache key', async () => {
    const { requests } = await read(testdata('codex-0169-subagent.jsonl'))
    expect(
      requests.map((request) => [request.session, request.parent, request.kind, request.turn, request.step]),
    ).toEqual([
      [`${MAIN}.subagent-${CHILD}`, MAIN, 'subagent', 1, 1],
      [`${MAIN}.subagent-${CHILD}`, MAIN, 'subagent', 1, 2],
    ])
    expect(requests[0]?.request?.body.prompt_cache_key).toBe(MAIN)
  })
})

describe('CodexReading', () => {
  const record = (line: number, value: Record<string, unknown>): JsonRecord => ({
    value,
    line,
    where: `child.jsonl:${line}`,
  })
  const tokenCount = (time: string, total: number) => ({
    timestamp: time,
    type: 'event_msg',
    payload: {
      type: 'token_count',
      info: {
        total_token_usage: { input_tokens: total, cached_input_tokens: 0, output_tokens: 1 },
        last_token_usage: { input_tokens: 100, cached_input_tokens: 0, output_tokens: 1 },
      },
    },
  })

  it('ends a fork’s copy at the child’s own header written again, with one resume', () => {
    const reading = new CodexReading('child.jsonl', { lenient: false, onProblem: () => {} })
    const lines = [
      {
        timestamp: '2026-05-01T10:00:00.000Z',
        type: 'session_meta',
        payload: { id: 'c', forked_from_id: 'p' },
      },
      tokenCount('2026-05-01T10:00:00.002Z', 100),
      { timestamp: '2026-05-01T10:00:00.003Z', type: 'session_meta', payload: { id: 'c' } },
      tokenCount('2026-05-01T10:00:00.500Z', 200),
    ]
    const requests = lines.flatMap((value, index) => reading.accept(record(index + 1, value)))
    expect(requests.map((request) => [request.source, request.events, request.copied])).toEqual([
      ['child.jsonl:2', [], { from: 'p' }],
      ['child.jsonl:4', [{ kind: 'resume', detail: 'forked from p' }], undefined],
    ])
  })
})

describe('readCodex on a subagent spawned with fork_context: true (Codex 0.169 against serve)', () => {
  const ROOT = '01a2527c-7d2f-7090-b8fd-8e43c7ad45f0'
  const CHILD = '01a2527c-8ced-76e2-b6ec-fc0f97a63fec'
  const usage = (request: ObservedRequest) =>
    `${request.usage.input}/${request.usage.cacheRead ?? 0}/${request.usage.output}`

  it('reads it as a subagent of its root, as a capture names it, with its own requests', async () => {
    // Its rollout opens with its header (`forked_from_id`, `subagent_history_start_ordinal`), then the
    // root's header and history, written in the same millisecond as its own first records.
    const { requests } = await read(testdata('codex-0169-forked-subagent.jsonl'))
    expect(
      requests.map((request) => [
        request.session,
        request.parent,
        request.kind,
        request.copied,
        usage(request),
      ]),
    ).toEqual([
      [`${ROOT}.subagent-${CHILD}`, ROOT, 'subagent', undefined, '5735/0/11'],
      [`${ROOT}.subagent-${CHILD}`, ROOT, 'subagent', undefined, '5801/5632/2'],
    ])
    expect(requests.map((request) => [request.turn, request.step])).toEqual([
      [1, 1],
      [1, 2],
    ])
  })

  it('rebuilds its requests with the history it was forked with, the root’s id as cache key', async () => {
    const { requests } = await read(testdata('codex-0169-forked-subagent.jsonl'))
    const body = requests[0]?.request?.body as { input: Array<{ role?: string }>; prompt_cache_key: string }
    expect(body.prompt_cache_key).toBe(ROOT)
    // The root's skills and environment messages and its two prompts, then the subagent's own prompt.
    expect(body.input.map((item) => item.role)).toEqual(['developer', 'user', 'user', 'user', 'user'])
  })
})

/** The independent count of notes/2026-11-30-import-codex.md (jq over token_count events). */
const SAMPLE_COUNTS: Record<
  string,
  { requests: number; input: number; cached: number; output: number; reasoning: number }
> = {
  'codex-jnarowski-rollout-01997e76.jsonl': {
    requests: 132,
    input: 7_494_343,
    cached: 7_290_112,
    output: 99_678,
    reasoning: 72_192,
  },
  'codex-jnarowski-rollout-01997ea4.jsonl': {
    requests: 18,
    input: 149_449,
    cached: 120_192,
    output: 4_808,
    reasoning: 2_688,
  },
  'codex-jnarowski-rollout-01998190.jsonl': {
    requests: 85,
    input: 3_165_637,
    cached: 2_958_336,
    output: 12_340,
    reasoning: 6_144,
  },
  'codex-steipete-fork-parent-sanitized.jsonl': {
    requests: 178,
    input: 24_889_714,
    cached: 23_737_856,
    output: 102_678,
    reasoning: 47_451,
  },
  'codex-steipete-fork-child-sanitized.jsonl': {
    requests: 16,
    input: 1_802_560,
    cached: 1_646_080,
    output: 6_959,
    reasoning: 3_004,
  },
}

describe.skipIf(!existsSync(SAMPLES))('readCodex on the real samples', () => {
  it.each(Object.entries(SAMPLE_COUNTS))(
    '%s: its own requests and token sums match the independent count',
    async (name, expected) => {
      const whole = await read(join(SAMPLES, name))
      const { problems } = whole
      const requests = whole.requests.filter((request) => request.copied === undefined)
      const sum = (pick: (request: ObservedRequest) => number | undefined) =>
        requests.reduce((total, request) => total + (pick(request) ?? 0), 0)
      expect(problems).toEqual([])
      expect({
        requests: requests.length,
        input: sum((request) => request.usage.input),
        cached: sum((request) => request.usage.cacheRead),
        output: sum((request) => request.usage.output),
        reasoning: sum((request) => request.usage.reasoning),
      }).toEqual(expected)
    },
  )

  it('gives the parent’s usage in the fork child only as copies, and names the parent', async () => {
    const parentTotals = new Set<string>()
    for await (const record of readJsonRecords(join(SAMPLES, 'codex-steipete-fork-parent-sanitized.jsonl'), {
      lenient: false,
      onProblem: () => {},
    })) {
      const payload = record.value.payload as { type?: string; info?: { total_token_usage?: unknown } }
      if (payload.type === 'token_count') parentTotals.add(JSON.stringify(payload.info?.total_token_usage))
    }
    const child = join(SAMPLES, 'codex-steipete-fork-child-sanitized.jsonl')
    const totalsByLine = new Map<number, string>()
    for await (const record of readJsonRecords(child, { lenient: false, onProblem: () => {} })) {
      const payload = record.value.payload as { type?: string; info?: { total_token_usage?: unknown } }
      if (payload.type === 'token_count')
        totalsByLine.set(record.line, JSON.stringify(payload.info?.total_token_usage))
    }
    const childTotals = (request: ObservedRequest) => totalsByLine.get(line(request)) ?? ''
    const all = (await read(child)).requests
    const requests = all.filter((request) => request.copied === undefined)
    const copies = all.filter((request) => request.copied !== undefined)
    // The child's copy holds every request of the parent's file, each one named a copy of the parent's.
    expect(copies).toHaveLength(SAMPLE_COUNTS['codex-steipete-fork-parent-sanitized.jsonl']?.requests ?? 0)
    expect(copies.every((request) => parentTotals.has(childTotals(request)))).toBe(true)
    expect(new Set(copies.map((request) => request.copied?.from))).toEqual(new Set(['parent-session']))
    expect(requests.every((request) => !parentTotals.has(childTotals(request)))).toBe(true)
    expect(new Set(requests.map((request) => `${request.session} < ${request.parent}`))).toEqual(
      new Set(['child-session < parent-session']),
    )
  })
})
