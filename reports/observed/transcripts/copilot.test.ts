import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { copilotUsage, readCopilot } from './copilot.ts'
import { readAll } from './read-all.ts'

const testdata = (name: string) => join(import.meta.dirname, 'testdata', name)

const read = (file: string, lenient = false) => readAll(readCopilot, file, lenient)

function temporaryFile(lines: unknown[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'cachelab-copilot-')), 'events.jsonl')
  writeFileSync(
    file,
    `${lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')}\n`,
  )
  return file
}

const SESSION = '063a9c89-a362-47aa-9184-24f0b3da96db'

/** Each request as `<conversation> <kind> turn.step` and `input/read/write/output`. */
const listed = (requests: Awaited<ReturnType<typeof read>>['requests'], session: string) =>
  requests.map(({ session: name, kind, turn, step, usage }) => [
    `${name.replace(session, '<session>')} ${kind ?? 'main'} ${turn}.${step}`,
    `${usage.input}/${usage.cacheRead}/${usage.cacheWrite ?? 0}/${usage.output}`,
  ])

describe('Copilot CLI usage', () => {
  it('takes both cache buckets out of its input count, which holds them', () => {
    const counts = { inputTokens: 10545, cacheReadTokens: 10470, cacheWriteTokens: 72, outputTokens: 34 }
    expect(copilotUsage(counts, 'anthropic')).toEqual({
      input: 10545,
      uncached: 3,
      cacheRead: 10470,
      cacheWrite: 72,
      output: 34,
      raw: counts,
    })
  })

  it('leaves the writes OpenAI does not report undefined, though Copilot records them as 0', () => {
    const counts = { inputTokens: 11469, cacheReadTokens: 11136, cacheWriteTokens: 0, outputTokens: 34 }
    expect(copilotUsage({ ...counts, reasoningTokens: 32 }, 'openai-responses')).toEqual({
      input: 11469,
      uncached: 333,
      cacheRead: 11136,
      output: 34,
      reasoning: 32,
      raw: { ...counts, reasoningTokens: 32 },
    })
    expect(copilotUsage({ outputTokens: 1 }, 'openai-responses')).toBeUndefined()
  })
})

describe('a Copilot CLI 1.0.102 session (made against serve: a subagent, a /compact, three processes)', () => {
  it("reads the main conversation's, the subagent's and the compaction's requests with serve's usage", async () => {
    const { requests, notes, problems } = await read(testdata('copilot-session.jsonl'))
    expect([notes, problems]).toEqual([[], []])
    // serve's capture of the same session: input/read/write/output per request, in order.
    expect(listed(requests, SESSION)).toEqual([
      ['<session> main 1.1', '11200/0/0/60'],
      ['<session>.subagent-8af4d935-55d7-486e-a819-f97cb956af1f subagent 1.1', '3358/0/0/42'],
      ['<session>.subagent-8af4d935-55d7-486e-a819-f97cb956af1f subagent 1.2', '3614/3328/0/34'],
      ['<session> main 1.2', '11469/11136/0/34'],
      ['<session>.compaction-1 compaction 1.1', '12246/10752/0/40'],
      ['<session> main 2.1', '11336/10752/0/42'],
      ['<session> main 2.2', '11583/11264/0/34'],
    ])
    expect(requests[0]).toMatchObject({
      format: 'copilot',
      provider: 'openai-responses',
      model: 'gpt-5.4',
      agent: 'copilot/1.0.102',
      requestId: 'resp_sim000002',
      time: '2026-12-08T01:03:32.956Z',
      events: [],
    })
    expect(requests[1]).toMatchObject({ parent: SESSION, kind: 'subagent' })
    expect(requests[4]).toMatchObject({ parent: SESSION, kind: 'compaction' })
    // Each later process opens with a resume; the second one compacted.
    expect(requests[5]?.events).toEqual([
      { kind: 'resume' },
      { kind: 'compaction', detail: 'manual compaction' },
      { kind: 'resume' },
    ])
  })

  it('reads the Messages wire, its writes apart', async () => {
    const { requests } = await read(testdata('copilot-anthropic.jsonl'))
    expect(listed(requests, '42b74ed1-3cc1-4fe2-94b7-fd1cdb26ff79')).toEqual([
      ['<session> main 1.1', '10473/0/10470/42'],
      ['<session> main 1.2', '10545/10470/72/34'],
    ])
    expect(requests[0]).toMatchObject({ provider: 'anthropic', model: 'claude-sonnet-4-6' })
  })
})

describe('a Copilot CLI file', () => {
  const start = {
    type: 'session.start',
    id: 'e0',
    timestamp: '2026-12-08T00:00:00.000Z',
    data: { sessionId: 's', copilotVersion: '1.0.102' },
  }
  const prompt = { type: 'user.message', id: 'e1', timestamp: '2026-12-08T00:00:01.000Z', data: {} }
  const record = (usage: Record<string, unknown>) => ({
    type: 'session.usage_record',
    id: 'e2',
    timestamp: '2026-12-08T00:00:02.000Z',
    data: {
      usage: {
        model: 'gpt-5.4',
        inputTokens: 100,
        outputTokens: 3,
        cacheReadTokens: 0,
        isByok: true,
        providerType: 'openai',
        apiEndpoint: '/responses',
        ...usage,
      },
    },
  })

  it("skips, and notes, requests sent through GitHub's routing or on a wire it cannot tell", async () => {
    const file = temporaryFile([
      start,
      prompt,
      record({ isByok: false }),
      record({ providerType: 'openai', apiEndpoint: '/embeddings' }),
      record({ apiEndpoint: '/chat/completions', model: 'gpt-4.1' }),
    ])
    const { requests, notes } = await read(file)
    expect(requests.map((request) => [request.provider, request.events])).toEqual([['openai-chat', []]])
    expect(notes.map((note) => note.message)).toEqual([
      "1 request sent through GitHub Copilot's own model routing skipped: cachelab does not know its cache",
      '1 request on provider type openai at /embeddings skipped: cachelab does not know the wire it was sent on',
    ])
  })

  it("puts a model switch on the conversation's next request", async () => {
    const file = temporaryFile([start, prompt, record({}), prompt, record({ model: 'gpt-5.4-mini' })])
    const { requests } = await read(file)
    expect(requests[1]?.events).toEqual([{ kind: 'model-switch', from: 'gpt-5.4', to: 'gpt-5.4-mini' }])
    expect(requests.map((request) => request.turn)).toEqual([1, 2])
  })

  it('does not count a compaction recorded as the sum of several requests', async () => {
    const file = temporaryFile([
      start,
      prompt,
      record({}),
      {
        type: 'session.compaction_complete',
        id: 'e3',
        timestamp: '2026-12-08T00:00:03.000Z',
        data: { success: true, trigger: 'auto', compactionTokensUsed: { requestCount: 2, inputTokens: 9 } },
      },
    ])
    const { requests, notes } = await read(file)
    expect(requests).toHaveLength(1)
    expect(notes.map((note) => note.message)).toEqual([
      '1 request of a compaction recorded as the sum of 2 requests: not counted',
    ])
  })

  it('fails on a corrupt line, naming file and line, unless lenient', async () => {
    const file = temporaryFile([start, '{"type":', prompt, record({})])
    await expect(read(file)).rejects.toThrow(`${file}:2`)
    const { requests, problems } = await read(file, true)
    expect([requests.length, problems.length]).toEqual([1, 1])
  })
})
