import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { isRecord } from '../../../harness/json-fields.ts'
import { DETECT_FIELDS, DETECT_RECORDS, detectFormat, formatOfRecord } from './detect.ts'
import { pickJson } from './json-pick.ts'
import { LineSplitter } from './line-bytes.ts'
import { TRANSCRIPT_FORMATS } from './types.ts'

const testdata = (name: string) => join(import.meta.dirname, 'testdata', name)
const SAMPLES = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'fixtures', 'transcripts')

function temporaryFile(name: string, lines: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'cachelab-detect-')), name)
  writeFileSync(file, `${lines.join('\n')}\n`)
  return file
}

describe('formatOfRecord on the fields detection builds', () => {
  it('tells every line of the test data and the samples as it tells the line parsed whole', () => {
    const files = [
      ...readdirSync(join(import.meta.dirname, 'testdata'))
        .filter((name) => name.endsWith('.jsonl'))
        .map(testdata),
      ...(existsSync(SAMPLES)
        ? readdirSync(SAMPLES)
            .filter((name) => name.endsWith('.jsonl'))
            .map((name) => join(SAMPLES, name))
        : []),
    ]
    let told = 0
    for (const file of files)
      for (const line of new LineSplitter().push(readFileSync(file))) {
        const picked = pickJson(line, DETECT_FIELDS)
        if (picked === undefined) continue
        const whole: unknown = JSON.parse(line.toString('utf8'))
        expect(isRecord(whole) ? formatOfRecord(whole) : undefined, `${file}: ${line.length} bytes`).toBe(
          formatOfRecord(picked),
        )
        if (formatOfRecord(picked) !== undefined) told += 1
      }
    expect(told).toBeGreaterThan(100)
  })
})

describe('formatOfRecord', () => {
  it('tells each format by a record only it writes', () => {
    expect(formatOfRecord({ timestamp: 't', type: 'session_meta', payload: { id: 'x' } })).toBe('codex')
    expect(formatOfRecord({ type: 'user', sessionId: 's', uuid: 'u', parentUuid: null })).toBe('claude-code')
    expect(formatOfRecord({ type: 'summary', summary: 'A title', leafUuid: 'u' })).toBe('claude-code')
    expect(formatOfRecord({ type: 'session', version: 0, id: 'd', createdAt: 1, cwd: '/w' })).toBe('dsh')
    expect(formatOfRecord({ type: 'turn/start', data: { turn: 1 } })).toBe('dsh')
    expect(formatOfRecord({ type: 'session', version: 3, id: 'p', timestamp: '2026-01-01T00:00:00Z' })).toBe(
      'pi',
    )
    expect(
      formatOfRecord({ type: 'message', timestamp: '2026-01-01T00:00:00Z', message: { role: 'user' } }),
    ).toBe('pi')
  })

  it("tells a Gemini CLI chat by its untyped header or its model's messages, not Claude Code's records", () => {
    expect(formatOfRecord({ sessionId: 's', projectHash: 'p', startTime: 't', lastUpdated: 't' })).toBe(
      'gemini-cli',
    )
    expect(formatOfRecord({ id: 'm', timestamp: 't', type: 'gemini', content: 'Hi', model: 'm' })).toBe(
      'gemini-cli',
    )
    expect(
      formatOfRecord({ id: 'm', timestamp: 't', type: 'user', content: [{ text: 'Hi' }] }),
    ).toBeUndefined()
    expect(formatOfRecord({ $set: { lastUpdated: 't' } })).toBeUndefined()
  })

  it("tells qwen-code's Claude-Code-shaped records by what Claude Code never writes", () => {
    const base = { type: 'user', sessionId: 's', uuid: 'u', parentUuid: null }
    expect(formatOfRecord({ ...base, provenance: 'real_user', message: { role: 'user', parts: [] } })).toBe(
      'qwen-code',
    )
    expect(formatOfRecord({ ...base, message: { role: 'user', parts: [{ text: 'Hi' }] } })).toBe('qwen-code')
    expect(formatOfRecord({ ...base, type: 'assistant', usageMetadata: { promptTokenCount: 1 } })).toBe(
      'qwen-code',
    )
    expect(formatOfRecord({ ...base, type: 'system', systemPayload: {} })).toBe('qwen-code')
    expect(formatOfRecord({ ...base, message: { role: 'user', content: 'Hi' } })).toBe('claude-code')
  })

  it('tells a Copilot CLI event by its dotted type, its data and its id', () => {
    expect(formatOfRecord({ type: 'session.start', data: { sessionId: 's' }, id: 'e', parentId: null })).toBe(
      'copilot',
    )
    expect(formatOfRecord({ type: 'assistant.turn_start', data: {}, id: 'e', parentId: 'd' })).toBe('copilot')
    expect(formatOfRecord({ type: 'session.start', data: 'x', id: 'e' })).toBeUndefined()
  })

  it('leaves a record that could be several formats, or none, undecided', () => {
    expect(formatOfRecord({ type: 'file-history-snapshot', messageId: 'm' })).toBeUndefined()
    expect(formatOfRecord({ hello: 'world' })).toBeUndefined()
  })
})

describe('detectFormat', () => {
  it('tells a file by its first lines, compressed or not', async () => {
    expect(await detectFormat(testdata('claude-code-dedupe.jsonl'))).toBe('claude-code')
    expect(await detectFormat(testdata('claude-code-sidechains.jsonl'))).toBe('claude-code')
    expect(await detectFormat(testdata('codex-fork-child.jsonl'))).toBe('codex')
    expect(await detectFormat(testdata('detect-dsh.jsonl.zstd'))).toBe('dsh')
    expect(await detectFormat(testdata('gemini-cli-session.jsonl'))).toBe('gemini-cli')
    expect(await detectFormat(testdata('qwen-code-session.jsonl'))).toBe('qwen-code')
    expect(await detectFormat(testdata('pi-v3-custom-provider.jsonl'))).toBe('pi')
    expect(await detectFormat(testdata('copilot-session.jsonl'))).toBe('copilot')
  })

  it('takes every Claude Code fixture for Claude Code, not qwen-code', async () => {
    const names = readdirSync(join(import.meta.dirname, 'testdata')).filter((name) =>
      name.startsWith('claude-code-'),
    )
    expect(names.length).toBeGreaterThan(0)
    for (const name of names)
      expect([name, await detectFormat(testdata(name))]).toEqual([name, 'claude-code'])
  })

  it("tells opencode's export by its opening and its database by SQLite's magic and its tables", async () => {
    expect(await detectFormat(testdata('opencode-export.json'))).toBe('opencode')
    expect(await detectFormat(temporaryFile('other.json', ['{"info": {"title": "x"}}']))).toBeUndefined()
    const database = join(mkdtempSync(join(tmpdir(), 'cachelab-detect-')), 'opencode.db')
    const writer = new Database(database)
    writer.exec('create table session (id text); create table message (id text); create table part (id text)')
    writer.close()
    expect(await detectFormat(database)).toBe('opencode')
  })

  it("tells Kilo Code's database from opencode's by the tables of its own beside them", async () => {
    const database = join(mkdtempSync(join(tmpdir(), 'cachelab-detect-')), 'kilo.db')
    const writer = new Database(database)
    writer.exec(
      'create table session (id text); create table message (id text); create table part (id text); create table kilo_board (id text)',
    )
    writer.close()
    expect(await detectFormat(database)).toBe('kilo')
  })

  it('passes over a corrupt first line', async () => {
    const file = temporaryFile('late.jsonl', [
      '{"type":',
      '{"type":"turn_context","timestamp":"t","payload":{}}',
    ])
    expect(await detectFormat(file)).toBe('codex')
  })

  it(`gives up after ${DETECT_RECORDS} records that tell nothing`, async () => {
    const lines = Array.from({ length: DETECT_RECORDS }, (_, index) => JSON.stringify({ index }))
    const file = temporaryFile('unknown.jsonl', [...lines, '{"type":"session_meta","payload":{}}'])
    expect(await detectFormat(file)).toBeUndefined()
  })
})

describe.skipIf(!existsSync(SAMPLES))('detectFormat on the real samples', () => {
  it('names the format each sample file is named after', async () => {
    const names = readdirSync(SAMPLES).filter((name) => name.endsWith('.jsonl'))
    expect(names.length).toBeGreaterThan(0)
    for (const name of names) {
      const expected = TRANSCRIPT_FORMATS.find((format) => name.startsWith(`${format}-`))
      expect([name, await detectFormat(join(SAMPLES, name))]).toEqual([name, expected])
    }
  })
})
