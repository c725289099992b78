import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { piProvider, piUsage, readPi } from './pi.ts'
import { readAll } from './read-all.ts'
import type { ObservedRequest } from './types.ts'

const testdata = (name: string) => fileURLToPath(new URL(`testdata/${name}`, import.meta.url))
const samples = fileURLToPath(new URL('../../../../shared/fixtures/transcripts/', import.meta.url))

const read = (file: string, lenient = false) => readAll(readPi, file, lenient)

const MAIN = 'c2b7e1d4-0f5a-4c3e-9b1d-2a6f8e9d7c01'

describe('pi usage', () => {
  it('adds the cached buckets to input, which pi records without them', () => {
    const raw = { input: 5, output: 30, cacheRead: 2400, cacheWrite: 120, totalTokens: 2555 }
    expect(piUsage(raw, 'anthropic')).toEqual({
      input: 2525,
      uncached: 5,
      cacheRead: 2400,
      cacheWrite: 120,
      output: 30,
      raw,
    })
  })

  it("keeps a zero write only from Anthropic: elsewhere pi's 0 means not reported", () => {
    const raw = { input: 300, output: 52, cacheRead: 1664, cacheWrite: 0 }
    expect(piUsage(raw, 'anthropic')?.cacheWrite).toBe(0)
    expect(piUsage(raw, 'openai-chat')?.cacheWrite).toBeUndefined()
    expect(piUsage({ output: 1 }, 'anthropic')).toBeUndefined()
  })
})

describe('a pi provider', () => {
  it('is the one whose cache the wire API pi spoke reaches, custom providers too', () => {
    expect(piProvider('anthropic', 'anthropic-messages')).toBe('anthropic')
    expect(piProvider('openai', 'openai-responses')).toBe('openai-responses')
    expect(piProvider('openai', 'openai-completions')).toBe('openai-chat')
    expect(piProvider('deepseek', 'openai-completions')).toBe('deepseek')
    expect(piProvider('google', 'google-generative-ai')).toBe('gemini')
    expect(piProvider('amazon-bedrock', 'bedrock-converse-stream')).toBe('bedrock')
    expect(piProvider('proxy', 'anthropic-messages')).toBe('anthropic')
    expect(piProvider('local', 'openai-completions')).toBe('openai-chat')
    expect(piProvider('anthropic', undefined)).toBe('anthropic')
  })

  it("is none for an API cachelab does not simulate, or a built-in vendor's borrowed one", () => {
    expect(piProvider('mistral', 'mistral-conversations')).toBeUndefined()
    expect(piProvider('proxy', 'mistral-conversations')).toBeUndefined()
    expect(piProvider('proxy', undefined)).toBeUndefined()
    expect(piProvider('openrouter', 'openai-completions')).toBeUndefined()
    expect(piProvider('xai', 'openai-completions')).toBeUndefined()
  })
})

describe('a pi 0.73.1 session through a custom models.json provider (made against serve)', () => {
  it("reads every request on the provider of the provider's API, with the usage serve answered", async () => {
    const { requests, notes } = await read(testdata('pi-v3-custom-provider.jsonl'))
    expect(notes).toEqual([])
    // serve's capture of the same session: input/read/write/output per request.
    expect(
      requests.map(({ provider, model, turn, step, usage }) => [
        `${provider} ${model} ${turn}.${step}`,
        `${usage.input}/${usage.cacheRead}/${usage.cacheWrite}/${usage.output}`,
      ]),
    ).toEqual([
      ['anthropic claude-sonnet-4-6 1.1', '1225/0/1222/42'],
      ['anthropic claude-sonnet-4-6 1.2', '1283/1222/58/34'],
      ['anthropic claude-sonnet-4-6 2.1', '1327/1280/44/42'],
      ['anthropic claude-sonnet-4-6 2.2', '1385/1324/58/34'],
      ['anthropic claude-sonnet-4-6 3.1', '1426/1382/41/42'],
      ['anthropic claude-sonnet-4-6 3.2', '1484/1423/58/34'],
    ])
    expect(new Set(requests.map((request) => request.session))).toEqual(
      new Set(['01a2342e-0511-75d2-a986-e8659f31a8ac']),
    )
  })
})

describe('a pi version 3 session', () => {
  it('yields a request per assistant message with usage, with its turn, step and start time', async () => {
    const { requests, problems } = await read(testdata('pi-v3.jsonl'))
    expect(problems).toEqual([])
    expect(requests.map((request) => [request.turn, request.step, request.model])).toEqual([
      [1, 1, 'claude-sonnet-4-5'],
      [1, 2, 'claude-sonnet-4-5'],
      [2, 1, 'claude-sonnet-4-5'],
      [3, 1, 'claude-opus-4-5'],
      [4, 1, 'claude-opus-4-5'],
      [2, 1, 'claude-sonnet-4-5'],
      [3, 1, 'claude-sonnet-4-5'],
    ])
    expect(requests[0]).toMatchObject({
      format: 'pi',
      source: `${testdata('pi-v3.jsonl')}:5`,
      session: MAIN,
      provider: 'anthropic',
      // The message's own time (its request's start), not the entry's (when the answer was saved).
      time: '2026-09-01T08:00:11.000Z',
      usage: { input: 2412, uncached: 12, cacheRead: 0, cacheWrite: 2400, output: 40 },
    })
  })

  it('reports net thinking-level and model changes, and compactions, as events', async () => {
    const { requests } = await read(testdata('pi-v3.jsonl'))
    expect(requests.slice(0, 5).map((request) => request.events)).toEqual([
      [],
      [],
      [{ kind: 'config-change', detail: 'thinking level off → high' }],
      [{ kind: 'model-switch', from: 'claude-sonnet-4-5', to: 'claude-opus-4-5' }],
      [{ kind: 'compaction', detail: 'compaction of 2800 tokens' }],
    ])
  })

  it('makes a branch off an earlier entry a session of its own, with the level at its branch point', async () => {
    const { requests } = await read(testdata('pi-v3.jsonl'))
    const branch = requests.slice(5)
    expect(branch.map((request) => [request.session, request.parent])).toEqual([
      [`${MAIN}.branch-a0000017`, MAIN],
      [`${MAIN}.branch-a0000017`, MAIN],
    ])
    expect(branch.map((request) => request.events)).toEqual([
      [{ kind: 'compaction', detail: 'branch summary' }],
      // Branched where the level was still off: the branch's own change to high is a change.
      [{ kind: 'config-change', detail: 'thinking level off → high' }],
    ])
  })

  it('counts, in notes, the requests it does not yield: other providers, all-zero usage', async () => {
    const { notes } = await read(testdata('pi-v3.jsonl'))
    expect(notes.map((note) => note.message)).toEqual([
      '1 request to provider mistral (api mistral-conversations) skipped: cachelab does not model its cache',
      '1 request with all-zero usage (aborted or failed before an answer): not counted',
    ])
    expect(notes[0]?.where).toBe(`${testdata('pi-v3.jsonl')}:24`)
  })
})

describe('a pi version 1 session', () => {
  it('reads entries in file order, with the header naming the first model and thinking level', async () => {
    const file = testdata('pi-v1.jsonl')
    const { requests, problems } = await read(file, true)
    expect(problems).toEqual([
      { where: `${file}:13`, message: '2 JSON values run together on one line (a lost newline)' },
    ])
    expect(
      requests.map((request) => [request.session, request.provider, request.turn, request.step]),
    ).toEqual([
      ['8f3e2d1c-5b4a-4f6e-9d8c-7b6a5f4e3d2c', 'anthropic', 1, 1],
      ['8f3e2d1c-5b4a-4f6e-9d8c-7b6a5f4e3d2c', 'anthropic', 2, 1],
      ['8f3e2d1c-5b4a-4f6e-9d8c-7b6a5f4e3d2c', 'openai-chat', 4, 1],
      ['8f3e2d1c-5b4a-4f6e-9d8c-7b6a5f4e3d2c', 'deepseek', 4, 2],
    ])
    expect(requests.map((request) => request.events)).toEqual([
      [],
      [{ kind: 'config-change', detail: 'thinking level off → medium' }],
      [
        { kind: 'compaction', detail: 'compaction of 1950 tokens' },
        { kind: 'model-switch', from: 'claude-sonnet-4-5', to: 'gpt-5.4' },
      ],
      [{ kind: 'model-switch', from: 'gpt-5.4', to: 'deepseek-v4-flash' }],
    ])
    expect(requests[2]?.usage).toEqual({
      input: 1964,
      uncached: 300,
      cacheRead: 1664,
      output: 52,
      raw: expect.any(Object),
    })
  })

  it('fails on a line holding two JSON objects, naming file and line, unless lenient', async () => {
    const file = testdata('pi-v1.jsonl')
    await expect(read(file)).rejects.toThrow(`${file}:13: 2 JSON values run together`)
  })

  it("branched from another session, counts only what came after its creation: the copy is the parent's", async () => {
    const file = testdata('pi-v1-branched.jsonl')
    const { requests, notes } = await read(file)
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({
      session: '2e3f4a5b-6c7d-4e8f-9a0b-1c2d3e4f5a6b',
      parent: '8f3e2d1c-5b4a-4f6e-9d8c-7b6a5f4e3d2c',
      turn: 2,
      step: 1,
      events: [],
    })
    expect(notes).toEqual([
      { where: `${file}:3`, message: "1 request copied from the parent session's file: not counted again" },
    ])
  })
})

describe('a pi file without its header', () => {
  it('fails at its first line, or under lenient is a session named after the file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cachelab-pi-')), '2026-08-01_headless.jsonl')
    const usage = { input: 1, output: 2, cacheRead: 3, cacheWrite: 4 }
    const message = {
      role: 'assistant',
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      usage,
      timestamp: 0,
    }
    writeFileSync(
      file,
      `${JSON.stringify({ type: 'message', timestamp: '2026-08-01T00:00:00Z', message })}\n`,
    )
    await expect(read(file)).rejects.toThrow(`${file}:1: the file has no pi session header`)
    const { requests, problems } = await read(file, true)
    expect(problems).toHaveLength(1)
    expect(requests.map((request) => [request.session, request.usage.input])).toEqual([
      ['2026-08-01_headless', 8],
    ])
  })
})

// The real samples (see ../shared/fixtures/transcripts/SOURCES.md) are others' data, read in place; CI's
// clean clone has none. The expected sums are the independent Python count of
// notes/2026-11-30-import-dsh-pi.md.
describe.skipIf(!existsSync(samples))('the real pi samples', () => {
  const expected: Record<
    string,
    { requests: number; uncached: number; read: number; write: number; output: number; corrupt: string[] }
  > = {
    'pi-badlogic-before-compaction.jsonl': {
      requests: 0,
      uncached: 0,
      read: 0,
      write: 0,
      output: 0,
      corrupt: [],
    },
    'pi-badlogic-compact.jsonl': {
      requests: 498,
      uncached: 14151,
      read: 42913033,
      write: 934691,
      output: 94696,
      corrupt: ['1013'],
    },
    'pi-badlogic-large-session.jsonl': {
      requests: 439,
      uncached: 1049,
      read: 43229469,
      write: 4296232,
      output: 83156,
      corrupt: [],
    },
    'pi-badlogic-session-2025-12-17.jsonl': {
      requests: 214,
      uncached: 1568,
      read: 25283499,
      write: 982512,
      output: 46995,
      corrupt: ['440'],
    },
  }

  it.each(Object.keys(expected))('%s reads to the independently counted sums', async (name) => {
    const { corrupt, ...sums } = expected[name] as (typeof expected)[string]
    const { requests, problems } = await read(`${samples}${name}`, true)
    // A line holding two records run together is reported, and both are read.
    expect(problems.map((problem) => problem.where.split(':').at(-1))).toEqual(corrupt)
    const sum = (pick: (request: ObservedRequest) => number) =>
      requests.reduce((total, request) => total + pick(request), 0)
    expect({
      requests: requests.length,
      uncached: sum((request) => request.usage.uncached),
      read: sum((request) => request.usage.cacheRead ?? 0),
      write: sum((request) => request.usage.cacheWrite ?? 0),
      output: sum((request) => request.usage.output),
    }).toEqual(sums)
    if (corrupt.length > 0) await expect(read(`${samples}${name}`)).rejects.toThrow(`${name}:${corrupt[0]}:`)
  })

  it('the branched sample is all its parent: its 398 copied requests are noted, not counted', async () => {
    const { notes } = await read(`${samples}pi-badlogic-before-compaction.jsonl`)
    expect(notes.map((note) => note.message)).toEqual([
      "398 requests copied from the parent session's file: not counted again",
    ])
  })

  it('a model switch and thinking-level changes show up as events where the large session rewrote its cache', async () => {
    const { requests } = await read(`${samples}pi-badlogic-large-session.jsonl`)
    const changes = requests.filter((request) =>
      request.events.some((event) => event.kind === 'config-change'),
    )
    expect(changes.length).toBeGreaterThan(0)
    // Turning thinking on or off rewrites the prompt on Anthropic: those requests read nothing.
    const toggled = changes.filter((request) =>
      request.events.some((event) => event.kind === 'config-change' && /off/.test(event.detail)),
    )
    expect(toggled.every((request) => request.usage.cacheRead === 0)).toBe(true)
  })
})
