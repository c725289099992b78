import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CachelabError } from '../../../harness/errors.ts'
import { ClaudeCodeReading, readClaudeCode } from './claude-code.ts'
import { readJsonRecords } from './lines.ts'
import type { ObservedRequest, TranscriptProblem } from './types.ts'

const testdata = (name: string) => join(import.meta.dirname, 'testdata', name)
const SAMPLES = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'fixtures', 'transcripts')

async function read(file: string, lenient = false) {
  const requests: ObservedRequest[] = []
  const problems: TranscriptProblem[] = []
  for await (const request of readClaudeCode(file, { lenient, onProblem: (p) => problems.push(p) }))
    requests.push(request)
  return { requests, problems }
}

/** The file read with every line parsed whole, as the reader read it before it picked fields. */
async function readWhole(file: string, lenient: boolean) {
  const requests: ObservedRequest[] = []
  const problems: TranscriptProblem[] = []
  const options = { lenient, onProblem: (problem: TranscriptProblem) => problems.push(problem) }
  const reading = new ClaudeCodeReading(file, options)
  let error: unknown
  try {
    for await (const record of readJsonRecords(file, options)) requests.push(...reading.accept(record))
    requests.push(...reading.finish())
  } catch (caught) {
    error = caught
  }
  return { requests, problems, error: error instanceof Error ? error.message : undefined }
}

/** The file read as import reads it, its error as a message. */
async function readPicked(file: string, lenient: boolean) {
  try {
    return { ...(await read(file, lenient)), error: undefined }
  } catch (caught) {
    return { requests: [], problems: [], error: (caught as Error).message }
  }
}

const line = (request: ObservedRequest | undefined) => Number(request?.source.split(':').pop())

describe('readClaudeCode', () => {
  it('reads one request from the lines of one response, its source the first line and its output the last', async () => {
    const { requests } = await read(testdata('claude-code-dedupe.jsonl'))
    const first = requests[0]
    expect(requests).toHaveLength(3)
    expect(first?.source).toBe(`${testdata('claude-code-dedupe.jsonl')}:3`)
    expect(first?.requestId).toBe('req_A')
    expect(first?.time).toBe('2026-01-10T10:00:02.000Z')
    expect(first?.usage).toMatchObject({
      input: 3004,
      uncached: 4,
      cacheRead: 0,
      cacheWrite: 3000,
      output: 90,
    })
  })

  it('splits the writes by lifetime as cache_creation records them', async () => {
    const { requests } = await read(testdata('claude-code-dedupe.jsonl'))
    expect(requests.map((request) => [request.usage.cacheWrite5m, request.usage.cacheWrite1h])).toEqual([
      [0, 3000],
      [200, 0],
      [40, 60],
    ])
  })

  it("skips Claude Code's synthetic API-error line", async () => {
    const { requests } = await read(testdata('claude-code-dedupe.jsonl'))
    expect(requests.map((request) => request.requestId)).toEqual(['req_A', 'req_B', 'req_C'])
  })

  it('opens a turn at a user line that says something, not at one that returns tool results', async () => {
    const { requests } = await read(testdata('claude-code-dedupe.jsonl'))
    expect(requests.map((request) => [request.turn, request.step])).toEqual([
      [1, 1],
      [1, 2],
      [2, 1],
    ])
  })

  it('reads inline sidechains as sessions of their own under the main session, in file order', async () => {
    const { requests } = await read(testdata('claude-code-sidechains.jsonl'))
    const main = '5c5c0de0-0000-4000-8000-00000000a1a1'
    expect(requests.map((request) => [line(request), request.session, request.parent])).toEqual([
      [3, main, undefined],
      [6, `${main}.sidechain-s1`, main],
      [7, `${main}.sidechain-s2`, main],
      [9, `${main}.sidechain-s1`, main],
      [12, main, undefined],
    ])
  })

  it('does not count a sidechain copy of a response already read', async () => {
    const { requests } = await read(testdata('claude-code-sidechains.jsonl'))
    expect(requests.filter((request) => request.requestId === 'req_m1')).toHaveLength(1)
  })

  it('names a subagent file’s session after its agent, its parent the main session', async () => {
    const { requests } = await read(testdata('claude-code-subagent.jsonl'))
    const main = 'ab0de000-0000-4000-8000-0000000a9e47'
    expect(requests.map((request) => [request.session, request.parent])).toEqual([
      [`${main}.subagent-a0f3e1`, main],
      [`${main}.subagent-a0f3e1`, main],
    ])
  })

  it('tells what happened before each request: tool list, model, compaction, resume, a ToolSearch', async () => {
    const { requests } = await read(testdata('claude-code-events.jsonl'))
    expect(requests.map((request) => request.events)).toEqual([
      [],
      [
        { kind: 'tools-change', detail: 'deferred tools +2 −0' },
        { kind: 'model-switch', from: 'claude-opus-4-5-20251101', to: 'claude-sonnet-4-5-20250929' },
      ],
      // The boundary and its summary are one compaction, and the boundary's new root is not a resume.
      [{ kind: 'compaction', detail: 'auto, 150000 tokens before' }],
      [{ kind: 'resume', detail: 'Claude Code 2.0.1 → 2.0.5' }],
      [{ kind: 'resume', detail: 'a new conversation root' }],
      [{ kind: 'compaction', detail: 'microcompact, 4000 tokens saved' }],
      [],
      [{ kind: 'tools-change', detail: 'ToolSearch loaded deferred tools' }],
    ])
  })

  describe('on a --fork-session of a compacted session (Claude Code 2.1.328 against serve)', () => {
    const PARENT = '558128f3-64ed-445d-9c75-7290f338a43e'
    const FORK = 'b472b2d3-e78a-4395-aa47-838c9f672403'
    const usage = (request: ObservedRequest) =>
      `${request.usage.input}/${request.usage.cacheRead ?? 0}/${request.usage.cacheWrite ?? 0}/${request.usage.output}`

    it("gives the fork's repeat of its parent's entries as copies naming the parent, then its own requests", async () => {
      const { requests } = await read(testdata('claude-code-fork-child.jsonl'))
      expect(requests.map((request) => [request.requestId, request.session, request.copied])).toEqual([
        // The last request before /compact, kept with its usage zeroed, and the one after it.
        ['req_sim000007', FORK, { from: PARENT }],
        ['req_sim000011', FORK, { from: PARENT }],
        ['req_sim000014', FORK, undefined],
        ['req_sim000016', FORK, undefined],
      ])
      expect(requests.map(usage)).toEqual([
        '0/0/0/0',
        '12176/9501/2672/34',
        '12189/12173/13/43',
        '12221/12186/32/34',
      ])
      expect(requests.every((request) => request.parent === undefined)).toBe(true)
    })

    it('goes on from the copies with a resume: a new process, forked from the parent', async () => {
      const { requests } = await read(testdata('claude-code-fork-child.jsonl'))
      expect(requests[2]?.events).toEqual([{ kind: 'resume', detail: `forked from ${PARENT}` }])
      expect(requests[3]?.events).toEqual([])
    })

    it('names, with each running total, the request it was written after', async () => {
      const totals: Array<{ after?: string; costUsd: number }> = []
      const requests: ObservedRequest[] = []
      for await (const request of readClaudeCode(testdata('claude-code-fork-parent.jsonl'), {
        lenient: false,
        onProblem: () => {},
        onAgentTotal: ({ after, costUsd }) =>
          totals.push({ ...(after !== undefined ? { after } : {}), costUsd }),
      }))
        requests.push(request)
      expect(requests.map((request) => request.requestId)).toEqual([
        'req_sim000002',
        'req_sim000005',
        'req_sim000007',
        'req_sim000011',
      ])
      expect(totals).toEqual([
        { after: 'req_sim000002', costUsd: 0.059537 },
        { after: 'req_sim000007', costUsd: 0.0660414 },
        // /compact: its summary request is in the total, not in the transcript.
        { after: 'req_sim000007', costUsd: 0.074496 },
        { after: 'req_sim000011', costUsd: 0.0904482 },
      ])
    })

    it("reads the parent's own requests, none a copy, the one after /compact carrying the compaction", async () => {
      const { requests } = await read(testdata('claude-code-fork-parent.jsonl'))
      expect(requests.map((request) => request.copied)).toEqual([undefined, undefined, undefined, undefined])
      expect(requests[3]?.events).toEqual([
        { kind: 'compaction', detail: 'manual, 11853 tokens before' },
        // The deferred tools announced again after the summary.
        { kind: 'tools-change', detail: 'deferred tools +3 −0' },
      ])
    })
  })

  it('does not open a turn at a compact summary', async () => {
    const { requests } = await read(testdata('claude-code-events.jsonl'))
    expect(requests.map((request) => [request.turn, request.step])).toEqual([
      [1, 1],
      [2, 1],
      [2, 2],
      [3, 1],
      [4, 1],
      [4, 2],
      [4, 3],
      [4, 4],
    ])
  })

  it('fails at the first damaged line (two records run together), naming file and line', async () => {
    const file = testdata('claude-code-damaged.jsonl')
    const error = await read(file).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CachelabError)
    expect((error as CachelabError).message).toBe(
      `${file}:3: 2 JSON values run together on one line (a lost newline) (--lenient skips such lines and counts them)`,
    )
  })

  it('when lenient, reports the doubled, corrupt and torn lines, reads both requests of the doubled one and skips the rest', async () => {
    const file = testdata('claude-code-damaged.jsonl')
    const { requests, problems } = await read(file, true)
    expect(requests.map((request) => [line(request), request.requestId])).toEqual([
      [2, 'req_d1'],
      [3, 'req_d2'],
      [3, 'req_d3'],
    ])
    expect(problems.map((problem) => problem.where)).toEqual([`${file}:3`, `${file}:4`, `${file}:6`])
  })
})

/** The independent count of notes/2026-11-30-import-claude-code.md (jq, grouped by message id). */
const SAMPLE_COUNTS: Record<
  string,
  {
    requests: number
    uncached: number
    cacheRead: number
    cacheWrite: number
    write1h: number
    output: number
  }
> = {
  'claude-code-d-kimuson-inline-sidechains.jsonl': {
    requests: 170,
    uncached: 818,
    cacheRead: 3_647_854,
    cacheWrite: 137_976,
    write1h: 0,
    output: 51_933,
  },
  'claude-code-daaain-deep-manifest.jsonl': {
    requests: 103,
    uncached: 2_250,
    cacheRead: 8_505_166,
    cacheWrite: 175_207,
    write1h: 0,
    output: 31_430,
  },
  'claude-code-daaain-model-switch.jsonl': {
    requests: 37,
    uncached: 149,
    cacheRead: 1_227_972,
    cacheWrite: 126_282,
    write1h: 0,
    output: 3_130,
  },
  'claude-code-daaain-worktrees-main.jsonl': {
    requests: 17,
    uncached: 1_308,
    cacheRead: 728_660,
    cacheWrite: 102_189,
    write1h: 102_189,
    output: 22_901,
  },
  'claude-code-daaain-worktrees-subagent.jsonl': {
    requests: 20,
    uncached: 445,
    cacheRead: 615_694,
    cacheWrite: 113_769,
    write1h: 0,
    output: 7_923,
  },
  'claude-code-jimmc414-cctrace-phase0.jsonl': {
    requests: 100,
    uncached: 2_016,
    cacheRead: 10_172_221,
    cacheWrite: 622_125,
    write1h: 0,
    output: 64_185,
  },
}

describe('readClaudeCode building only the fields it reads', () => {
  const files = [
    ...readdirSync(join(import.meta.dirname, 'testdata'))
      .filter((name) => name.startsWith('claude-code-') || name === 'lines-damaged.jsonl')
      .map(testdata),
    ...(existsSync(SAMPLES)
      ? readdirSync(SAMPLES)
          .filter((name) => name.startsWith('claude-code-'))
          .map((name) => join(SAMPLES, name))
      : []),
  ]

  it.each(files.flatMap((file) => [[file, false] as const, [file, true] as const]))(
    'reads %s (lenient: %s) as it reads every line parsed whole',
    async (file, lenient) => {
      const whole = await readWhole(file, lenient)
      const picked = await readPicked(file, lenient)
      // Requests read before a strict read fails are not compared: import keeps none of them.
      expect(picked.error).toEqual(whole.error)
      if (whole.error === undefined) expect(picked.requests).toEqual(whole.requests)
      expect(picked.problems).toEqual(whole.problems)
    },
  )
})

describe.skipIf(!existsSync(SAMPLES))('readClaudeCode on the real samples', () => {
  it.each(Object.entries(SAMPLE_COUNTS))(
    '%s: requests and token sums match the independent count',
    async (name, expected) => {
      const { requests, problems } = await read(join(SAMPLES, name))
      const sum = (pick: (request: ObservedRequest) => number | undefined) =>
        requests.reduce((total, request) => total + (pick(request) ?? 0), 0)
      expect(problems).toEqual([])
      expect({
        requests: requests.length,
        uncached: sum((request) => request.usage.uncached),
        cacheRead: sum((request) => request.usage.cacheRead),
        cacheWrite: sum((request) => request.usage.cacheWrite),
        write1h: sum((request) => request.usage.cacheWrite1h),
        output: sum((request) => request.usage.output),
      }).toEqual(expected)
      for (const request of requests)
        expect(request.usage.input).toBe(
          request.usage.uncached + (request.usage.cacheRead ?? 0) + (request.usage.cacheWrite ?? 0),
        )
    },
  )

  it('reads the inline sidechains as five sessions of their own beside the main one', async () => {
    const { requests } = await read(join(SAMPLES, 'claude-code-d-kimuson-inline-sidechains.jsonl'))
    const sessions = new Map<string, number>()
    for (const request of requests) sessions.set(request.session, (sessions.get(request.session) ?? 0) + 1)
    const main = 'fe5e1c67-53e7-4862-81ae-d0e013e3270b'
    expect(sessions.get(main)).toBe(9)
    expect([...sessions.keys()].filter((session) => session.startsWith(`${main}.sidechain-`))).toHaveLength(5)
    expect([...sessions.values()].sort((a, b) => a - b)).toEqual([9, 9, 25, 34, 40, 53])
    expect(requests.every((request) => (request.session === main) === (request.parent === undefined))).toBe(
      true,
    )
  })

  it('names the subagent file’s session after its agent', async () => {
    const { requests } = await read(join(SAMPLES, 'claude-code-daaain-worktrees-subagent.jsonl'))
    expect(new Set(requests.map((request) => `${request.session} < ${request.parent}`))).toEqual(
      new Set([
        'ef958aa1-0e93-49f0-bb71-150f63befcd1.subagent-a4ca7529859c158c2 < ef958aa1-0e93-49f0-bb71-150f63befcd1',
      ]),
    )
  })

  it('takes each ToolSearch call for a tool-list change before the next request, which rewrites', async () => {
    for (const name of [
      'claude-code-daaain-worktrees-main.jsonl',
      'claude-code-daaain-worktrees-subagent.jsonl',
    ]) {
      const { requests } = await read(join(SAMPLES, name))
      const after = requests.filter((request) =>
        request.events.some((event) => event.kind === 'tools-change'),
      )
      expect(after.length).toBeGreaterThan(0)
      for (const request of after) expect(request.usage.cacheWrite).toBeGreaterThan(1024)
    }
  })

  it('sees the three model switches of the model-switch session', async () => {
    const { requests } = await read(join(SAMPLES, 'claude-code-daaain-model-switch.jsonl'))
    const switches = requests.flatMap((request) =>
      request.events.filter((event) => event.kind === 'model-switch'),
    )
    expect(switches).toHaveLength(3)
  })
})
