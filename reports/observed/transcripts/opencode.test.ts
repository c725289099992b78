import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { CachelabError } from '../../../harness/errors.ts'
import { detectFormat } from './detect.ts'
import { jsoncText, opencodeProvider, opencodeUsage, readOpencode } from './opencode.ts'
import type { ObservedRequest, ReadOptions, TranscriptProblem } from './types.ts'

const testdata = (name: string) => join(import.meta.dirname, 'testdata', name)

async function readAll(
  file: string,
  options: Partial<ReadOptions> = {},
): Promise<{ requests: ObservedRequest[]; notes: TranscriptProblem[]; problems: TranscriptProblem[] }> {
  const notes: TranscriptProblem[] = []
  const problems: TranscriptProblem[] = []
  const requests: ObservedRequest[] = []
  for await (const request of readOpencode(file, {
    lenient: false,
    onProblem: (problem) => problems.push(problem),
    onNote: (note) => notes.push(note),
    ...options,
  }))
    requests.push(request)
  return { requests, notes, problems }
}

const usageOf = (request: ObservedRequest) =>
  `${request.usage.input}/${request.usage.cacheRead ?? 0}/${request.usage.cacheWrite ?? 0}/${request.usage.output}`

/** A workspace whose opencode.json declares the `cachelab` provider on the OpenAI-compatible package. */
function workspace(): string {
  const folder = mkdtempSync(join(tmpdir(), 'cachelab-opencode-workspace-'))
  writeFileSync(
    join(folder, 'opencode.json'),
    '{\n  // as the agents bench writes it\n  "provider": { "cachelab": { "npm": "@ai-sdk/openai-compatible", }, },\n}\n',
  )
  return folder
}

// The tables opencode 1.18.33 reads sessions from, with the columns the reader uses (the real schema has
// more, all with defaults or nullable here).
const SCHEMA = `
  create table session (id text primary key, project_id text not null, parent_id text, directory text not null,
    title text not null, version text not null, time_created integer not null, time_updated integer not null);
  create table message (id text primary key, session_id text not null, time_created integer not null,
    time_updated integer not null, data text not null);
  create table part (id text primary key, message_id text not null, session_id text not null,
    time_created integer not null, time_updated integer not null, data text not null);
`

const tokens = (input: number, read: number, output: number, reasoning = 0, write = 0) => ({
  total: input + read + write + output + reasoning,
  input,
  output,
  reasoning,
  cache: { read, write },
})

interface Built {
  file: string
  /** The writer's connection, left open so its writes stay in the WAL. */
  writer: Database.Database
}

const open: Database.Database[] = []
afterEach(() => {
  for (const database of open.splice(0)) database.close()
})

/** A WAL-mode database like opencode's with a main session (one message of two steps), a subagent and a compaction. */
function buildDatabase(directory: string, extra?: (database: Database.Database) => void): Built {
  const file = join(mkdtempSync(join(tmpdir(), 'cachelab-opencode-db-')), 'opencode.db')
  const writer = new Database(file)
  open.push(writer)
  writer.pragma('journal_mode = WAL')
  writer.pragma('wal_autocheckpoint = 0')
  writer.exec(SCHEMA)
  const session = writer.prepare('insert into session values (?, ?, ?, ?, ?, ?, ?, ?)')
  session.run('ses_main', 'global', null, directory, 'A title', '1.18.33', 1000, 1000)
  session.run(
    'ses_child',
    'global',
    'ses_main',
    directory,
    'Explore (@general subagent)',
    '1.18.33',
    5000,
    5000,
  )
  const message = writer.prepare('insert into message values (?, ?, ?, ?, ?)')
  const part = writer.prepare('insert into part values (?, ?, ?, ?, ?, ?)')
  const user = (id: string, sessionId: string, at: number) =>
    message.run(id, sessionId, at, at, JSON.stringify({ role: 'user', time: { created: at } }))
  const assistant = (id: string, sessionId: string, at: number, fields: Record<string, unknown> = {}) =>
    message.run(
      id,
      sessionId,
      at,
      at,
      JSON.stringify({
        role: 'assistant',
        providerID: 'cachelab',
        modelID: 'gpt-4.1',
        time: { created: at },
        ...fields,
      }),
    )
  const step = (id: string, messageId: string, sessionId: string, at: number, usage: unknown) =>
    part.run(
      id,
      messageId,
      sessionId,
      at,
      at,
      JSON.stringify({ type: 'step-finish', reason: 'stop', tokens: usage, cost: 0 }),
    )
  user('msg_01', 'ses_main', 1100)
  assistant('msg_02', 'ses_main', 1200)
  part.run(
    'prt_02a',
    'msg_02',
    'ses_main',
    1300,
    1300,
    JSON.stringify({ type: 'text', text: 'a long answer' }),
  )
  step('prt_02b', 'msg_02', 'ses_main', 1400, tokens(7280, 0, 9))
  step('prt_02c', 'msg_02', 'ses_main', 1600, tokens(131, 7168, 2))
  user('msg_03', 'ses_main', 2000)
  assistant('msg_04', 'ses_main', 2100)
  step('prt_04a', 'msg_04', 'ses_main', 2200, tokens(19, 7296, 21, 5))
  user('msg_05', 'ses_child', 5100)
  assistant('msg_06', 'ses_child', 5200)
  step('prt_06a', 'msg_06', 'ses_child', 5300, tokens(3151, 2688, 9))
  user('msg_07', 'ses_main', 6000)
  assistant('msg_08', 'ses_main', 6100, { summary: true, mode: 'compaction', agent: 'compaction' })
  step('prt_08a', 'msg_08', 'ses_main', 6200, tokens(7400, 0, 300))
  user('msg_09', 'ses_main', 7000)
  assistant('msg_10', 'ses_main', 7100)
  step('prt_10a', 'msg_10', 'ses_main', 7200, tokens(0, 0, 0))
  assistant('msg_11', 'ses_main', 7300, { tokens: tokens(350, 0, 4) })
  extra?.(writer)
  return { file, writer }
}

const hashOf = (file: string) => createHash('sha1').update(readFileSync(file)).digest('hex')

describe('opencodeUsage', () => {
  it('adds the cache back into input and reasoning into output', () => {
    expect(opencodeUsage(tokens(19, 7296, 21, 5), 'openai-chat')).toMatchObject({
      input: 7315,
      uncached: 19,
      cacheRead: 7296,
      output: 26,
      reasoning: 5,
    })
  })

  it('counts a zero cache write only where the provider reports writes', () => {
    expect(opencodeUsage(tokens(10, 0, 1), 'openai-chat')?.cacheWrite).toBeUndefined()
    expect(opencodeUsage(tokens(10, 0, 1), 'anthropic')?.cacheWrite).toBe(0)
    expect(opencodeUsage(tokens(10, 20, 1, 0, 30), 'anthropic')).toMatchObject({ input: 60, cacheWrite: 30 })
  })

  it('is undefined without input and output', () => {
    expect(opencodeUsage({ cache: { read: 1 } }, 'anthropic')).toBeUndefined()
  })
})

describe('opencodeProvider', () => {
  it("reads the wire API from the provider's package, then opencode's own ids", () => {
    expect(opencodeProvider('cachelab', '@ai-sdk/openai-compatible')).toBe('openai-chat')
    expect(opencodeProvider('proxy', '@ai-sdk/anthropic')).toBe('anthropic')
    expect(opencodeProvider('openai', undefined)).toBe('openai-responses')
    expect(opencodeProvider('anthropic', undefined)).toBe('anthropic')
    expect(opencodeProvider('xai', undefined)).toBe('xai')
    expect(opencodeProvider('cachelab', undefined)).toBeUndefined()
  })
})

describe('jsoncText', () => {
  it('drops comments and trailing commas, not what strings hold', () => {
    expect(JSON.parse(jsoncText('{ "a": "http://x/*y*/", // c\n /* d */ "b": [1, 2,], }'))).toEqual({
      a: 'http://x/*y*/',
      b: [1, 2],
    })
  })
})

describe('readOpencode on a database', () => {
  it("reads every session's requests, step by step, from what is still in the WAL", async () => {
    const { file } = buildDatabase(workspace())
    // Nothing checkpointed: the sessions are in the WAL only.
    expect(readFileSync(`${file}-wal`).length).toBeGreaterThan(readFileSync(file).length)
    const { requests, notes } = await readAll(file)
    const summary = requests.map(
      (request) =>
        `${request.session} ${request.kind ?? 'main'} ${request.turn}.${request.step} ${usageOf(request)}`,
    )
    expect(summary).toEqual([
      'ses_main.subagent-ses_child subagent 1.1 5839/2688/0/9',
      'ses_main main 1.1 7280/0/0/9',
      'ses_main main 1.2 7299/7168/0/2',
      'ses_main main 2.1 7315/7296/0/26',
      'ses_main.compaction-1 compaction 1.1 7400/0/0/300',
      'ses_main main 4.2 350/0/0/4',
    ])
    expect(
      requests.every((request) => request.provider === 'openai-chat' && request.model === 'gpt-4.1'),
    ).toBe(true)
    expect(requests.every((request) => request.agent === 'opencode/1.18.33')).toBe(true)
    expect(requests[0]?.parent).toBe('ses_main')
    expect(requests[4]?.parent).toBe('ses_main')
    expect(requests[5]?.events).toEqual([{ kind: 'compaction', detail: 'opencode summary' }])
    // The second step of a message starts when the first one finished.
    expect(requests.slice(1, 3).map((request) => request.time)).toEqual([
      new Date(1200).toISOString(),
      new Date(1400).toISOString(),
    ])
    expect(notes.map((note) => note.message)).toEqual([
      '1 request with all-zero usage (aborted or failed before an answer): not counted',
    ])
  })

  it('writes neither the database nor its WAL', async () => {
    const { file } = buildDatabase(workspace())
    const before = [hashOf(file), hashOf(`${file}-wal`)]
    await readAll(file)
    expect([hashOf(file), hashOf(`${file}-wal`)]).toEqual(before)
  })

  it('skips, and counts, requests to a provider whose API nothing names', async () => {
    const { file } = buildDatabase(join(tmpdir(), 'no-such-workspace'))
    const { requests, notes } = await readAll(file)
    expect(requests).toEqual([])
    expect(
      notes.some((note) => note.message.startsWith('7 requests to opencode provider cachelab skipped')),
    ).toBe(true)
  })

  it('fails on a corrupt message naming the file and the message, unless lenient', async () => {
    const { file } = buildDatabase(workspace(), (database) =>
      database
        .prepare('insert into message values (?, ?, ?, ?, ?)')
        .run('msg_99', 'ses_main', 9000, 9000, '{torn'),
    )
    await expect(readAll(file)).rejects.toThrow(CachelabError)
    await expect(readAll(file)).rejects.toThrow(`${file}:message msg_99: not a JSON object`)
    const { requests, problems } = await readAll(file, { lenient: true })
    expect(requests).toHaveLength(6)
    expect(problems.map((problem) => problem.where)).toEqual([`${file}:message msg_99`])
  })

  it('is detected as opencode, and a SQLite file without its tables is not', async () => {
    const { file } = buildDatabase(workspace())
    expect(await detectFormat(file)).toBe('opencode')
    const other = join(mkdtempSync(join(tmpdir(), 'cachelab-opencode-other-')), 'other.db')
    const database = new Database(other)
    database.exec('create table notes (id text)')
    database.close()
    expect(await detectFormat(other)).toBeUndefined()
  })
})

describe('readOpencode on an `opencode export`', () => {
  // A three-turn session made against serve (the agents bench), tool output cut.
  const exported = () => JSON.parse(readFileSync(testdata('opencode-export.json'), 'utf8'))

  it("reads the session's requests as the capture recorded them", async () => {
    const value = exported()
    value.info.directory = workspace()
    const file = join(mkdtempSync(join(tmpdir(), 'cachelab-opencode-export-')), 'session.json')
    writeFileSync(file, JSON.stringify(value, null, 2))
    expect(await detectFormat(file)).toBe('opencode')
    const { requests } = await readAll(file)
    expect(requests.map((request) => `${request.turn}.${request.step} ${usageOf(request)}`)).toEqual([
      '1.1 7280/0/0/9',
      '1.2 7299/7168/0/2',
      '2.1 7315/7296/0/21',
      '2.2 7380/7296/0/2',
      '3.1 7393/7296/0/11',
      '3.2 7433/7296/0/2',
    ])
    expect(new Set(requests.map((request) => request.session))).toEqual(new Set([value.info.id]))
  })

  it('names a subagent by its parent', async () => {
    const value = exported()
    value.info.directory = workspace()
    value.info.parentID = 'ses_parent'
    const folder = mkdtempSync(join(tmpdir(), 'cachelab-opencode-export-'))
    mkdirSync(folder, { recursive: true })
    const file = join(folder, 'child.json')
    writeFileSync(file, JSON.stringify(value))
    const { requests } = await readAll(file)
    expect(requests[0]).toMatchObject({ session: `ses_parent.subagent-${value.info.id}`, kind: 'subagent' })
  })

  it('fails on a file that is not one, naming it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cachelab-opencode-export-')), 'broken.json')
    writeFileSync(file, '{"info": {"id": "ses_x"}, "messages": [')
    await expect(readAll(file)).rejects.toThrow(`${file}:1: not a JSON object`)
  })
})
