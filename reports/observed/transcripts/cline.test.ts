import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { transcriptFiles } from '../../import.ts'
import { clineUsage, readCline } from './cline.ts'
import { detectFormat } from './detect.ts'
import { readAll } from './read-all.ts'

const sessions = join(import.meta.dirname, 'testdata', 'cline', 'sessions')
/** Cline 3.0.65 against serve on Anthropic: one turn whose first answer started a subagent (`spawn_agent`). */
const LEAD = join(sessions, '1796692808842_gfe7m', '1796692808842_gfe7m.messages.json')
const SUBAGENT = join(sessions, '1796692808842_gfe7m', 'agent_1796692813987_ias8hn.messages.json')
/** Cline 3.0.65 against serve as an OpenAI-compatible provider: one turn that read a file. */
const CHAT = join(sessions, '1796691232150_fb8xe', '1796691232150_fb8xe.messages.json')

const read = (file: string, lenient = false) => readAll(readCline, file, lenient)

/** Each request as `session kind turn.step` and `input/read/write/output`. */
const summary = (requests: Awaited<ReturnType<typeof read>>['requests']) =>
  requests.map(({ session, kind, turn, step, usage }) => [
    `${session} ${kind ?? 'main'} ${turn}.${step}`,
    `${usage.input}/${usage.cacheRead}/${usage.cacheWrite ?? 0}/${usage.output}`,
  ])

function temporaryFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'cachelab-cline-')), 's.messages.json')
  writeFileSync(file, text)
  return file
}

describe('Cline usage', () => {
  it('takes the reads and writes out of its input count, which holds them', () => {
    const metrics = { inputTokens: 4558, outputTokens: 19, cacheReadTokens: 0, cacheWriteTokens: 4555 }
    expect(clineUsage(metrics)).toEqual({
      input: 4558,
      uncached: 3,
      cacheRead: 0,
      cacheWrite: 4555,
      output: 19,
      raw: metrics,
    })
    expect(clineUsage({ inputTokens: 4536, outputTokens: 2, cacheReadTokens: 4480 })).toMatchObject({
      uncached: 56,
      cacheRead: 4480,
    })
    expect(clineUsage({ outputTokens: 2 })).toBeUndefined()
  })
})

describe('a Cline 3.0.65 session (made against serve)', () => {
  it("reads the lead's requests and its subagent's, with the usage serve's capture recorded", async () => {
    const lead = await read(LEAD)
    const subagent = await read(SUBAGENT)
    expect([lead.notes, lead.problems, subagent.notes, subagent.problems]).toEqual([[], [], [], []])
    // serve's capture of the same run, request for request: the lead's two, the subagent's two between them.
    expect(summary(lead.requests)).toEqual([
      ['1796692808842_gfe7m main 1.1', '4558/0/4555/19'],
      ['1796692808842_gfe7m main 1.2', '4613/4555/0/2'],
    ])
    expect(summary(subagent.requests)).toEqual([
      ['1796692808842_gfe7m__agent_1796692813987_ias8hn subagent 1.1', '1851/0/1848/15'],
      ['1796692808842_gfe7m__agent_1796692813987_ias8hn subagent 1.2', '1899/1848/0/2'],
    ])
    expect(subagent.requests[0]).toMatchObject({
      format: 'cline',
      parent: '1796692808842_gfe7m',
      agent: 'cline/3.0.65',
      provider: 'anthropic',
      model: 'claude-sonnet-4-6',
      time: '2026-12-08T01:20:14.390Z',
    })
    expect(lead.requests[0]?.source).toMatch(/1796692808842_gfe7m\.messages\.json:\d+$/)
  })

  it('reads an OpenAI-compatible provider as Chat Completions, which reports no writes', async () => {
    const { requests } = await read(CHAT)
    expect(summary(requests)).toEqual([
      ['1796691232150_fb8xe main 1.1', '4497/0/0/15'],
      ['1796691232150_fb8xe main 1.2', '4536/4480/0/2'],
    ])
    expect(requests.map((request) => request.provider)).toEqual(['openai-chat', 'openai-chat'])
  })

  it('is found under its sessions folder and told from its first bytes', async () => {
    expect(transcriptFiles([sessions]).map((file) => file.slice(sessions.length + 1))).toEqual([
      '1796691232150_fb8xe/1796691232150_fb8xe.messages.json',
      '1796692808842_gfe7m/1796692808842_gfe7m.messages.json',
      '1796692808842_gfe7m/agent_1796692813987_ias8hn.messages.json',
    ])
    expect(await detectFormat(LEAD)).toBe('cline')
    expect(await detectFormat(SUBAGENT)).toBe('cline')
  })
})

describe('a Cline file it cannot use whole', () => {
  it('names a torn file, and under --lenient skips it', async () => {
    const file = temporaryFile('{\n  "version": 1,\n  "messages": [\n')
    await expect(read(file)).rejects.toThrow(/s\.messages\.json:4: not a whole JSON object/)
    expect((await read(file, true)).problems).toHaveLength(1)
  })

  it('counts a request on a provider it does not model as skipped, and reads the others', async () => {
    const message = (provider: string, ts: number) => ({
      id: `m${ts}`,
      role: 'assistant',
      content: [],
      ts,
      modelInfo: { id: 'some-model', provider },
      metrics: { inputTokens: 10, outputTokens: 1 },
    })
    const file = temporaryFile(
      JSON.stringify({
        version: 1,
        updated_at: '2026-12-08T00:00:00.000Z',
        agent: 'lead',
        sessionId: 's',
        messages: [message('vertex', 1), message('anthropic', 2)],
      }),
    )
    const { requests, notes } = await read(file)
    expect(requests.map((request) => request.provider)).toEqual(['anthropic'])
    expect(notes).toEqual([
      { where: `${file}:1`, message: expect.stringMatching(/^1 request on provider vertex/) },
    ])
    expect(await detectFormat(file)).toBe('cline')
  })
})
