import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { qwenUsage, readQwenCode } from './qwen-code.ts'
import { readAll } from './read-all.ts'

const testdata = (name: string) => join(import.meta.dirname, 'testdata', name)

const read = (file: string, lenient = false) => readAll(readQwenCode, file, lenient)

function temporaryFile(lines: unknown[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'cachelab-qwen-')), 'session.jsonl')
  writeFileSync(
    file,
    `${lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')}\n`,
  )
  return file
}

const SESSION = '5fe794cc-d7c6-4f8c-96c1-e7b1d05e7af0'
const base = { sessionId: 's', version: '0.24.4', timestamp: '2026-12-02T00:00:00.000Z' }

describe('qwen-code usage', () => {
  it('takes the cached tokens out of the prompt count, which holds them, and reports no writes', () => {
    const raw = { promptTokenCount: 16342, cachedContentTokenCount: 16256, candidatesTokenCount: 12 }
    expect(qwenUsage({ prompt: 16342, cached: 16256, output: 12, thoughts: 0 }, raw)).toEqual({
      input: 16342,
      uncached: 86,
      cacheRead: 16256,
      output: 12,
      raw,
    })
    expect(qwenUsage({ prompt: 10, cached: undefined, output: 7, thoughts: 5 }, {})).toMatchObject({
      cacheRead: 0,
      output: 7,
      reasoning: 5,
    })
    expect(qwenUsage({ prompt: undefined, cached: 0, output: 1, thoughts: 0 }, {})).toBeUndefined()
  })
})

describe('a qwen-code 0.24.4 session (made against serve: three turns, a memory extraction)', () => {
  it("reads every response it recorded, the extractor's too, with the usage serve answered", async () => {
    const { requests, notes, problems } = await read(testdata('qwen-code-session.jsonl'))
    expect([notes, problems]).toEqual([[], []])
    // serve's capture of the same session: input/read/write/output per request, in order.
    expect(
      requests.map(({ session, kind, turn, step, usage }) => [
        `${session.replace(SESSION, '<session>')} ${kind ?? 'main'} ${turn}.${step}`,
        `${usage.input}/${usage.cacheRead}/${usage.cacheWrite ?? 0}/${usage.output}`,
      ]),
    ).toEqual([
      ['<session> main 1.1', '16328/0/0/2'],
      ['<session>.side-memory-4e201f00 side 1.1', '9861/0/0/12'],
      ['<session>.side-memory-4e201f00 side 1.2', '9899/9856/0/2'],
      ['<session> main 2.1', '16342/16256/0/12'],
      ['<session> main 2.2', '16380/16256/0/2'],
      ['<session> main 3.1', '16391/16256/0/12'],
      ['<session> main 3.2', '16429/16384/0/2'],
    ])
    expect(requests[0]).toMatchObject({
      format: 'qwen-code',
      provider: 'openai-chat',
      model: 'gpt-5.4',
      agent: 'qwen-code/0.24.4',
      requestId: 'chatcmpl-sim000001',
      time: '2026-12-02T00:35:40.385Z',
      events: [],
    })
    expect(requests[1]).toMatchObject({ parent: SESSION, kind: 'side' })
  })
})

describe('a qwen-code file', () => {
  const telemetry = (event: Record<string, unknown>) => ({
    ...base,
    type: 'system',
    subtype: 'ui_telemetry',
    systemPayload: { uiEvent: { 'event.name': 'qwen-code.api_response', auth_type: 'openai', ...event } },
  })
  const prompt = { ...base, type: 'user', message: { role: 'user', parts: [{ text: 'Hi' }] } }
  const answer = (usage: Record<string, number>) => ({
    ...base,
    type: 'assistant',
    model: 'm',
    usageMetadata: usage,
  })

  it('counts an assistant record no telemetry came before, on the auth type the file last named', async () => {
    const file = temporaryFile([
      prompt,
      telemetry({ model: 'm', input_token_count: 100, output_token_count: 3, cached_content_token_count: 0 }),
      answer({ promptTokenCount: 100, candidatesTokenCount: 3 }),
      prompt,
      answer({ promptTokenCount: 120, cachedContentTokenCount: 96, candidatesTokenCount: 4 }),
    ])
    const { requests } = await read(file)
    expect(requests.map((request) => [request.turn, request.step, request.usage.uncached])).toEqual([
      [1, 1, 100],
      [2, 1, 24],
    ])
  })

  it('skips, and notes, responses on an auth type it cannot tell the wire of', async () => {
    const file = temporaryFile([
      prompt,
      answer({ promptTokenCount: 100, candidatesTokenCount: 3 }),
      telemetry({ auth_type: 'qwen-oauth', model: 'q', input_token_count: 5, output_token_count: 1 }),
    ])
    const { requests, notes } = await read(file)
    expect(requests).toEqual([])
    expect(notes.map((note) => note.message)).toEqual([
      '1 request on auth type unrecorded skipped: cachelab does not know the wire it was sent on',
      '1 request on auth type qwen-oauth skipped: cachelab does not know the wire it was sent on',
    ])
  })

  it("puts a compression and a model switch on the main conversation's next request", async () => {
    const counts = { input_token_count: 10, output_token_count: 1 }
    const file = temporaryFile([
      prompt,
      telemetry({ model: 'a', ...counts }),
      {
        ...base,
        type: 'system',
        subtype: 'chat_compression',
        systemPayload: { info: { originalTokenCount: 900 } },
      },
      prompt,
      telemetry({ model: 'b', ...counts }),
    ])
    const { requests } = await read(file)
    expect(requests[1]?.events).toEqual([
      { kind: 'compaction', detail: 'compression of 900 tokens' },
      { kind: 'model-switch', from: 'a', to: 'b' },
    ])
  })

  it('fails on a corrupt line, naming file and line, unless lenient', async () => {
    const file = temporaryFile([
      prompt,
      '{"type":',
      telemetry({ model: 'm', input_token_count: 1, output_token_count: 1 }),
    ])
    await expect(read(file)).rejects.toThrow(`${file}:2`)
    const { requests, problems } = await read(file, true)
    expect([requests.length, problems.length]).toEqual([1, 1])
  })
})
