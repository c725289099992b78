import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { detectFormat } from './detect.ts'
import { geminiCliUsage, readGeminiCli } from './gemini-cli.ts'
import type { ObservedRequest, ReadOptions, TranscriptProblem } from './types.ts'

const testdata = (name: string) => join(import.meta.dirname, 'testdata', name)

/** Gemini CLI 0.61.0 against serve: "Say hello", then two resumed prompts, the last reading a file. */
const SESSION = testdata('gemini-cli-session.jsonl')
const SESSION_ID = '4e100991-5e2f-42be-9ac9-f552c8479238'

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
  for await (const request of readGeminiCli(file, options)) result.requests.push(request)
  return result
}

/** A chat file of these records, in a `chats` folder (or the folder given under it). */
function chatFile(records: readonly unknown[], folder = '', text?: string): string {
  const directory = join(mkdtempSync(join(tmpdir(), 'cachelab-gemini-')), 'chats', folder)
  mkdirSync(directory, { recursive: true })
  const file = join(directory, 'session-2026-12-02T00-35-aaaaaaaa.jsonl')
  writeFileSync(file, text ?? `${records.map((record) => JSON.stringify(record)).join('\n')}\n`)
  return file
}

const header = {
  sessionId: 'aaaaaaaa-1',
  projectHash: 'p',
  startTime: '2026-12-02T00:00:00.000Z',
  kind: 'main',
}
const prompt = (id: string, text: string) => ({
  id,
  timestamp: '2026-12-02T00:00:01.000Z',
  type: 'user',
  content: [{ text }],
})
const answer = (id: string, model: string, tokens: unknown) => ({
  id,
  timestamp: '2026-12-02T00:00:02.000Z',
  type: 'gemini',
  content: 'Done.',
  tokens,
  model,
})
const tokens = (input: number, cached: number) => ({
  input,
  output: 5,
  cached,
  thoughts: 0,
  tool: 0,
  total: input + 5,
})

describe('Gemini CLI usage', () => {
  it('takes the cached part out of input and adds thoughts to output, as the Gemini adapter does', () => {
    const raw = { input: 9450, output: 12, cached: 9432, thoughts: 32, tool: 0, total: 9494 }
    expect(geminiCliUsage(raw)).toEqual({
      input: 9450,
      uncached: 18,
      cacheRead: 9432,
      output: 44,
      reasoning: 32,
      raw,
    })
  })

  it('reports no write (implicit caching) and no reasoning where no thoughts were counted', () => {
    const usage = geminiCliUsage({ input: 100, output: 3, cached: 0, thoughts: 0, tool: 0, total: 103 })
    expect(usage).toMatchObject({ input: 100, uncached: 100, cacheRead: 0, output: 3 })
    expect(usage?.cacheWrite).toBeUndefined()
    expect(usage?.reasoning).toBeUndefined()
    expect(geminiCliUsage({ output: 3 })).toBeUndefined()
  })
})

describe('a Gemini CLI session read from its chat file', () => {
  it('gives each model response one request with its recorded usage, under the session id', async () => {
    const { requests, problems, notes } = await read(SESSION)
    expect(problems).toEqual([])
    expect(notes).toEqual([])
    expect(
      requests.map(
        (request) =>
          `${request.usage.input}/${request.usage.cacheRead}/${request.usage.cacheWrite ?? 0}/${request.usage.output}`,
      ),
    ).toEqual(['9422/0/0/34', '9435/9419/0/35', '9450/9432/0/44', '9538/9447/0/34'])
    for (const request of requests)
      expect(request).toMatchObject({
        format: 'gemini-cli',
        session: SESSION_ID,
        provider: 'gemini',
        model: 'gemini-3.8-flash',
        agent: 'gemini-cli',
      })
  })

  it('counts the model response written twice under one id (tokens, then its tool call) once, at its first line', async () => {
    const { requests } = await read(SESSION)
    expect(requests.map((request) => request.source.split(':').at(-1))).toEqual(['5', '13', '21', '26'])
    const twice = readFileSync(SESSION, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"id":"8691ca1d-5709-48eb-888a-057a561447bd"'))
    expect(twice).toHaveLength(2)
  })

  it('opens a turn at each prompt, not at a tool result, and marks each resume', async () => {
    const { requests } = await read(SESSION)
    expect(requests.map((request) => `${request.turn}.${request.step}`)).toEqual(['1.1', '2.1', '3.1', '3.2'])
    expect(requests.map((request) => request.events.map((event) => event.kind))).toEqual([
      [],
      ['resume'],
      ['resume'],
      [],
    ])
    expect(requests.map((request) => request.time)).toEqual([
      '2026-12-02T00:35:09.997Z',
      '2026-12-02T00:35:14.806Z',
      '2026-12-02T00:35:20.110Z',
      '2026-12-02T00:35:20.270Z',
    ])
  })

  it('names the first message rebuilt on a resume (a new file in the workspace listing) where a capture does', async () => {
    // Gemini CLI 0.61.0 resumed after a file was added: the message list set again holds the session
    // context message under its id with the new listing, then the prompts as before.
    const context = (files: string) => ({
      id: 'ctx',
      timestamp: '2026-12-02T00:00:00.500Z',
      type: 'user',
      content: [{ text: `<session_context>${files}</session_context>` }],
    })
    const first = prompt('p1', 'What does README.md say?')
    const reply = answer('a1', 'gemini-3.8-flash', tokens(10030, 9418))
    const file = chatFile([
      header,
      { $set: { messages: [context('README.md')] } },
      first,
      answer('a0', 'gemini-3.8-flash', tokens(9421, 0)),
      { ...header, startTime: '2026-12-02T00:01:00.000Z' },
      { $set: { sessionId: header.sessionId } },
      { $set: { messages: [context('README.md'), first, answer('a0', 'gemini-3.8-flash', undefined)] } },
      prompt('p2', 'And more?'),
      reply,
      { $set: { sessionId: header.sessionId } },
      {
        $set: {
          messages: [
            context('NEW.md README.md'),
            first,
            answer('a0', 'gemini-3.8-flash', undefined),
            prompt('p2', 'And more?'),
            reply,
          ],
        },
      },
      prompt('p3', 'And now?'),
      answer('a2', 'gemini-3.8-flash', tokens(10645, 9401)),
    ])
    const { requests } = await read(file)
    expect(requests.map((request) => request.events)).toEqual([
      [],
      [{ kind: 'resume', detail: 'chat resumed' }],
      [
        { kind: 'resume', detail: 'chat resumed' },
        { kind: 'message-edit', node: 'contents[0].0', detail: 'rebuilt on resume' },
      ],
    ])
  })

  it('is told apart from the other formats by its header', async () => {
    expect(await detectFormat(SESSION)).toBe('gemini-cli')
  })
})

describe('a damaged Gemini CLI chat file', () => {
  const torn = () => `${readFileSync(SESSION, 'utf8')}{"id":"x","type":"gemini","tokens":{"input":`

  it('fails on a torn last line, naming file and line', async () => {
    const file = chatFile([], '', torn())
    await expect(read(file)).rejects.toThrow(`${file}:28: torn last line`)
  })

  it('skips it under lenient and reads the rest', async () => {
    const file = chatFile([], '', torn())
    const { requests, problems } = await read(file, true)
    expect(requests).toHaveLength(4)
    expect(problems.map((problem) => problem.where)).toEqual([`${file}:28`])
  })
})

describe('Gemini CLI records beside the plain session', () => {
  it('notes a model switch from the previous request of the session', async () => {
    const file = chatFile([
      header,
      prompt('u1', 'One'),
      answer('g1', 'gemini-3.8-flash', tokens(900, 0)),
      prompt('u2', 'Two'),
      answer('g2', 'gemini-3.8-pro', tokens(950, 0)),
    ])
    const { requests } = await read(file)
    expect(requests.map((request) => request.events)).toEqual([
      [],
      [{ kind: 'model-switch', from: 'gemini-3.8-flash', to: 'gemini-3.8-pro' }],
    ])
  })

  it('counts a response first written without tokens once its tokens arrive, and notes one that never got any', async () => {
    const file = chatFile([
      header,
      prompt('u1', 'One'),
      answer('g1', 'gemini-3.8-flash', null),
      answer('g1', 'gemini-3.8-flash', tokens(900, 0)),
      answer('g2', 'gemini-3.8-flash', null),
    ])
    const { requests, notes } = await read(file)
    expect(requests.map((request) => [request.source.split(':').at(-1), request.usage.input])).toEqual([
      ['3', 900],
    ])
    expect(notes).toEqual([
      {
        where: `${file}:5`,
        message: '1 model response with no usage recorded (synthetic or interrupted): not counted',
      },
    ])
  })

  it('marks a compressed history (messages sent dropped, a summary brought in) as a compaction', async () => {
    const file = chatFile([
      header,
      prompt('u1', 'One'),
      answer('g1', 'gemini-3.8-flash', tokens(900, 0)),
      { $set: { sessionId: 'aaaaaaaa-1' } },
      { $set: { messages: [prompt('s1', '<state_snapshot>…</state_snapshot>'), prompt('u2', 'Two')] } },
      prompt('u3', 'Three'),
      answer('g2', 'gemini-3.8-flash', tokens(300, 0)),
    ])
    const { requests } = await read(file)
    expect(requests[1]?.events).toEqual([{ kind: 'compaction', detail: 'chat compression' }])
    expect(requests.map((request) => request.turn)).toEqual([1, 2])
  })

  it("names a subagent's file as a capture names the conversation: its parent session, then its id", async () => {
    const file = chatFile(
      [
        { ...header, sessionId: 'sub-1', kind: 'subagent' },
        prompt('u1', 'Task'),
        answer('g1', 'gemini-3.8-flash', tokens(500, 0)),
      ],
      'parent-1',
    )
    const { requests } = await read(file)
    expect(requests[0]).toMatchObject({
      session: 'parent-1.subagent-sub-1',
      parent: 'parent-1',
      kind: 'subagent',
    })
  })

  it('fails on a message before any session header unless lenient', async () => {
    const file = chatFile([prompt('u1', 'One'), answer('g1', 'gemini-3.8-flash', tokens(900, 0))])
    await expect(read(file)).rejects.toThrow(`${file}:1: the file has no Gemini CLI session header`)
    const { requests, problems } = await read(file, true)
    expect(requests).toHaveLength(1)
    expect(problems).toHaveLength(1)
  })
})

/** The fixture's session as an older Gemini CLI kept it: one pretty-printed object, each message once. */
function legacyFile(): string {
  const messages = new Map<string, unknown>()
  let session: Record<string, unknown> = {}
  for (const line of readFileSync(SESSION, 'utf8').split('\n')) {
    if (line === '') continue
    const record = JSON.parse(line) as Record<string, unknown>
    if (typeof record.id === 'string') messages.set(record.id, record)
    else if (!('$set' in record) && Object.keys(session).length === 0) session = record
  }
  const directory = join(mkdtempSync(join(tmpdir(), 'cachelab-gemini-')), 'chats')
  mkdirSync(directory)
  const json = join(directory, 'session-2025-11-20T10-00-aaaaaaaa.json')
  writeFileSync(json, JSON.stringify({ ...session, messages: [...messages.values()] }, null, 2))
  return json
}

describe("an older Gemini CLI's session-*.json", () => {
  it('gives the same requests as the chat file, each at the line of its id', async () => {
    const file = legacyFile()
    const { requests, problems } = await read(file)
    const chat = await read(SESSION)
    expect(problems).toEqual([])
    const usage = (list: ObservedRequest[]) =>
      list.map((request) => [
        request.session,
        request.turn,
        request.step,
        request.usage.input,
        request.usage.output,
      ])
    expect(usage(requests)).toEqual(usage(chat.requests))
    const lines = readFileSync(file, 'utf8').split('\n')
    for (const request of requests) {
      const line = Number(request.source.split(':').at(-1))
      expect(lines[line - 1]).toMatch(/^\s*"id": "/)
    }
    expect(await detectFormat(file)).toBe('gemini-cli')
  })

  it('is left to the .jsonl a later Gemini CLI converted it to, with a note', async () => {
    const file = legacyFile()
    writeFileSync(`${file}l`, readFileSync(SESSION))
    const { requests, notes } = await read(file)
    expect(requests).toEqual([])
    expect(notes.map((note) => note.message)).toEqual([
      `converted to ${file.split('/').at(-1)}l by a later Gemini CLI: its requests are read there`,
    ])
  })

  it('fails when torn, naming file and line, and is skipped under lenient', async () => {
    const file = legacyFile()
    const text = readFileSync(file, 'utf8')
    writeFileSync(file, text.slice(0, text.length / 2))
    const lines = text.slice(0, text.length / 2).split('\n').length
    await expect(read(file)).rejects.toThrow(`${file}:${lines}: not a whole JSON object`)
    const { requests, problems } = await read(file, true)
    expect(requests).toEqual([])
    expect(problems.map((problem) => problem.where)).toEqual([`${file}:${lines}`])
  })
})
