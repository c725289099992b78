import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { detectFormat } from './detect.ts'
import { customModels, droidModel, droidUsage, readDroid } from './droid.ts'
import { readAll } from './read-all.ts'

const testdata = (name: string) => join(import.meta.dirname, 'testdata', name)
const LOG = testdata('droid-home/logs/droid-log-single.log')

/** A Droid home with a settings file and a log of the given entries. */
function temporaryHome(settings: unknown, entries: string[]): string {
  const home = mkdtempSync(join(tmpdir(), 'cachelab-droid-'))
  writeFileSync(join(home, 'settings.json'), JSON.stringify(settings))
  const logs = join(home, 'logs')
  mkdirSync(logs)
  writeFileSync(join(logs, 'droid-log-single.log'), `${entries.join('\n')}\n`)
  return join(logs, 'droid-log-single.log')
}

const streaming = (time: string, context: Record<string, unknown>) =>
  `[${time}] INFO: [Agent] Streaming result | Context: ${JSON.stringify(context)}`

describe('Droid model ids', () => {
  it('names a custom model as Droid does: its display name dashed, numbered among the same names', () => {
    const folder = mkdtempSync(join(tmpdir(), 'cachelab-droid-'))
    writeFileSync(
      join(folder, 'settings.json'),
      JSON.stringify({
        customModels: [
          { model: 'claude-sonnet-4-6', displayName: 'My  Model', provider: 'anthropic' },
          { model: 'gpt-5.4', displayName: 'My Model', provider: 'openai' },
          { model: 'kimi-k2', displayName: 'Other', provider: 'generic-chat-completion-api' },
        ],
      }),
    )
    const models = customModels(folder)
    expect(Object.fromEntries(models)).toEqual({
      'custom:My-Model-0': { model: 'claude-sonnet-4-6', provider: 'anthropic' },
      'custom:My-Model-1': { model: 'gpt-5.4', provider: 'openai-responses' },
      'custom:Other-0': { model: 'kimi-k2', provider: 'openai-chat' },
    })
    expect(droidModel('claude-opus-4-6', models)).toEqual({ model: 'claude-opus-4-6', provider: 'anthropic' })
    expect(droidModel('custom:Gone-0', models)).toEqual({ model: 'Gone-0', provider: undefined })
  })
})

describe('Droid usage', () => {
  it("adds Droid's uncached count to the reads and writes it logs apart, and keeps writes only where the wire has them", () => {
    const context = {
      inputTokens: 3,
      cacheReadInputTokens: 9857,
      cachedTokensWritten: 66,
      outputTokens: 34,
      reasoningTokens: 46,
    }
    expect(droidUsage(context, 'anthropic')).toEqual({
      input: 9926,
      uncached: 3,
      cacheRead: 9857,
      cacheWrite: 66,
      output: 34,
      raw: context,
    })
    const chat = { inputTokens: 90, cacheReadInputTokens: 9856, cachedTokensWritten: 0, outputTokens: 34 }
    expect(droidUsage(chat, 'deepseek')).toEqual({
      input: 9946,
      uncached: 90,
      cacheRead: 9856,
      output: 34,
      raw: chat,
    })
    expect(
      droidUsage({ inputTokens: 332, outputTokens: 34, reasoningTokens: 32 }, 'openai-responses'),
    ).toMatchObject({ reasoning: 32 })
    expect(droidUsage({ outputTokens: 1 }, 'anthropic')).toBeUndefined()
  })
})

describe('a Droid 0.225.2 log (made against serve: one session on each of Anthropic, OpenAI Responses and DeepSeek Chat Completions)', () => {
  it('is told apart by its name and its first entry', async () => {
    expect(await detectFormat(LOG)).toBe('droid')
    expect(await detectFormat(testdata('droid-home/settings.json'))).toBeUndefined()
  })

  it("reads every request serve's capture of the same sessions holds, with the same usage, in order", async () => {
    const { requests, notes, problems } = await readAll(readDroid, LOG, false)
    expect([notes, problems]).toEqual([[], []])
    const capture = readFileSync(testdata('droid-capture.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            model: string
            usage: {
              input: number
              uncached: number
              cacheRead?: number
              cacheWrite?: number
              output: number
            }
          },
      )
    expect(requests).toHaveLength(capture.length)
    expect(
      requests.map(({ model, usage }) => [
        model,
        usage.input,
        usage.uncached,
        usage.cacheRead,
        usage.cacheWrite,
        usage.output,
      ]),
    ).toEqual(
      capture.map(({ model, usage }) => [
        model,
        usage.input,
        usage.uncached,
        usage.cacheRead,
        usage.cacheWrite,
        usage.output,
      ]),
    )
    expect(
      requests.map(({ session, provider, step, agent }) => [session.slice(0, 8), provider, step, agent]),
    ).toEqual([
      ['1c358e42', 'anthropic', 1, 'droid/0.225.2'],
      ['1c358e42', 'anthropic', 2, 'droid/0.225.2'],
      ['852e97d7', 'openai-responses', 1, 'droid/0.225.2'],
      ['852e97d7', 'openai-responses', 2, 'droid/0.225.2'],
      ['7e36d96f', 'deepseek', 1, 'droid/0.225.2'],
      ['7e36d96f', 'deepseek', 2, 'droid/0.225.2'],
    ])
  })

  it('reads no request from a session file, which holds no usage, and says where its requests are', async () => {
    const file = testdata('droid-home/sessions/-tmp-dr-ws/1c358e42-6380-414f-bdf0-8a98ee411267.jsonl')
    expect(await detectFormat(file)).toBe('droid')
    const { requests, notes } = await readAll(readDroid, file, false)
    expect(requests).toEqual([])
    expect(notes.map(({ message }) => message)).toEqual([
      "Droid session file: it holds no usage (its requests are read from Droid's log, logs/droid-log-single.log)",
    ])
  })

  it("names the OpenAI session as serve's capture does: Droid sends its session id as the prompt cache key", async () => {
    const { requests } = await readAll(readDroid, LOG, false)
    const capture = readFileSync(testdata('droid-capture.jsonl'), 'utf8')
    const openai = requests.find((request) => request.provider === 'openai-responses')
    expect(capture).toContain(`"session": "key-${openai?.session}"`)
  })
})

describe('a Droid log with what the reader cannot use', () => {
  it('counts requests on a model it cannot place, and marks a model switch within a session', async () => {
    const tags = (modelId: string) => ({ sessionId: 's1', modelId, version: '0.225.2' })
    const log = temporaryHome(
      { customModels: [{ model: 'gpt-5.4', displayName: 'G', provider: 'openai' }] },
      [
        streaming('2026-12-08T00:00:01.000Z', { inputTokens: 10, outputTokens: 1, tags: tags('custom:G-0') }),
        streaming('2026-12-08T00:00:02.000Z', {
          inputTokens: 10,
          outputTokens: 1,
          tags: tags('claude-opus-4-6'),
        }),
        streaming('2026-12-08T00:00:03.000Z', {
          inputTokens: 10,
          outputTokens: 1,
          tags: tags('custom:Gone-0'),
        }),
      ],
    )
    const { requests, notes } = await readAll(readDroid, log, false)
    expect(requests.map(({ model, events }) => [model, events])).toEqual([
      ['gpt-5.4', []],
      ['claude-opus-4-6', [{ kind: 'model-switch', from: 'gpt-5.4', to: 'claude-opus-4-6' }]],
    ])
    expect(notes.map(({ message }) => message)).toEqual([
      '1 request on Droid model custom:Gone-0 skipped: no wire API known for it (no customModels entry in the settings beside the log, and its name tells none)',
    ])
  })

  it('fails on an entry without its tags, naming the line, unless lenient', async () => {
    const log = temporaryHome({}, [
      streaming('2026-12-08T00:00:01.000Z', { inputTokens: 10, outputTokens: 1 }),
    ])
    await expect(readAll(readDroid, log, false)).rejects.toThrow(
      /droid-log-single\.log:1: .*session and model tags/,
    )
    expect((await readAll(readDroid, log, true)).problems).toHaveLength(1)
  })
})
