// `cachelab import` end to end: an agent's own files in, the run's files and the rewrites table out.
// Own fixtures for the rules; the real samples in ../shared (when present) for the acceptance.

import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type ImportOptions, importTranscripts as importWith, transcriptFiles } from '../reports/import.ts'
import { detectFormat, READERS } from '../reports/observed/transcripts/index.ts'
import { predictObserved } from '../reports/observed/transcripts/replay.ts'
import type { ObservedRow } from '../reports/observed-rows.ts'
import { parseCsv, parseStepsCsv } from '../reports/parse.ts'

/** An import with its rows collected. */
async function importTranscripts(paths: readonly string[], options: ImportOptions) {
  const entries: ObservedRow[] = []
  const result = await importWith(paths, options, (entry) => entries.push(entry))
  return { ...result, entries }
}

import { buildPrefixOf, requireCompleteRun } from '../reports/run-folder.ts'
import { runCli, withEnv } from './testing.ts'

const SESSION = '7e57ca5e-0000-4000-8000-000000000001'

/** A Claude Code session: one request per entry at `minute`, reading `read` and writing `write`. */
function claudeCodeSession(
  requests: Array<{ minute: number; read: number; write: number; hour?: boolean }>,
): string {
  const lines: string[] = []
  let parent: string | null = null
  for (const [index, request] of requests.entries()) {
    const time = (seconds: number) =>
      new Date(Date.parse('2026-11-02T09:00:00Z') + request.minute * 60_000 + seconds * 1000).toISOString()
    const user = `u${index}`
    lines.push(
      JSON.stringify({
        parentUuid: parent,
        isSidechain: false,
        type: 'user',
        message: { role: 'user', content: `Question ${index + 1}` },
        uuid: user,
        timestamp: time(0),
        sessionId: SESSION,
        version: '2.1.0',
      }),
    )
    const split =
      request.hour === true
        ? { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: request.write }
        : { ephemeral_5m_input_tokens: request.write, ephemeral_1h_input_tokens: 0 }
    lines.push(
      JSON.stringify({
        parentUuid: user,
        isSidechain: false,
        type: 'assistant',
        requestId: `req_${index}`,
        message: {
          model: 'claude-sonnet-4-6',
          id: `msg_${index}`,
          type: 'message',
          role: 'assistant',
          content: [{ type: 'text', text: `Answer ${index + 1}` }],
          stop_reason: 'end_turn',
          usage: {
            input_tokens: 12,
            cache_creation_input_tokens: request.write,
            cache_read_input_tokens: request.read,
            output_tokens: 40,
            cache_creation: split,
          },
        },
        uuid: `a${index}`,
        timestamp: time(5),
        sessionId: SESSION,
        version: '2.1.0',
      }),
    )
    parent = `a${index}`
  }
  return `${lines.join('\n')}\n`
}

function fixture(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'cachelab-import-'))
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}

const defaults = { readers: READERS, detect: detectFormat, predict: predictObserved }

describe('cachelab import on a Claude Code session with idle gaps', () => {
  // 5-minute writes: a 6-minute gap expires the prefix, a 3-minute one does not.
  const file = fixture(
    'session.jsonl',
    claudeCodeSession([
      { minute: 0, read: 0, write: 6000 },
      { minute: 3, read: 6000, write: 400 },
      { minute: 9, read: 0, write: 6500 },
      { minute: 12, read: 6500, write: 300 },
    ]),
  )

  it('calls ttl-expired only where the gap exceeds the lifetime the writes indicate', async () => {
    const { entries } = await importTranscripts([file], { ...defaults, format: 'auto', lenient: false })
    expect(entries.map(({ rewrite }) => rewrite.class)).toEqual([
      'session-start',
      'growth',
      'ttl-expired',
      'growth',
    ])
    expect(entries.map(({ row }) => row.providerCause)).toEqual([
      undefined,
      undefined,
      'ttl-expired',
      undefined,
    ])
    const hour = fixture(
      'hour.jsonl',
      claudeCodeSession([
        { minute: 0, read: 0, write: 6000, hour: true },
        { minute: 9, read: 0, write: 6400, hour: true },
      ]),
    )
    const held = await importTranscripts([hour], { ...defaults, format: 'auto', lenient: false })
    // A 1-hour prefix outlives a 9-minute gap: the rewrite is the client's, not an expiry.
    expect(held.entries[1]?.rewrite.class).toBe('unexplained')
  })

  it('writes the run files and rewrites.csv, and prints the cost with a 1-hour lifetime', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-import-out-'))
    const { code, stdout } = await runCli(['import', file, '--out', out, '--ttl', '1h'])
    expect(code).toBe(0)
    expect(parseStepsCsv(readFileSync(join(out, 'steps.csv'), 'utf8'), 'steps.csv')).toHaveLength(4)
    expect(readFileSync(join(out, 'rewrites.csv'), 'utf8').split('\n')[0]).toBe(
      'class,requests,write_tokens,write_share,missed_tokens,lost_usd',
    )
    expect(stdout).toMatch(/ttl-expired\s+1 requests\s+6,500 written/)
    expect(stdout).toMatch(
      /claude-code · 7e57ca5e-0000-4000-8000-000000000001 · anthropic: \$[\d.]+ recorded, \$[\d.]+ with 1h/,
    )
  })

  it('says which price a model the catalog lacks rests on: in each row, in the summary, the report and once on the terminal', async () => {
    const session = claudeCodeSession([
      { minute: 0, read: 0, write: 6000 },
      { minute: 1, read: 6000, write: 400 },
    ]).replaceAll('claude-sonnet-4-6', 'claude-sonnet-9-1')
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-import-standin-'))
    writeFileSync(join(dir, 'a.jsonl'), session)
    // Another session: its own session id and the provider's own ids for its requests.
    writeFileSync(
      join(dir, 'b.jsonl'),
      session
        .replaceAll(SESSION, '7e57ca5e-0000-4000-8000-000000000002')
        .replaceAll('"req_', '"req_b')
        .replaceAll('"msg_', '"msg_b'),
    )
    const out = mkdtempSync(join(tmpdir(), 'cachelab-import-out-'))
    const { code, stdout } = await runCli(['import', dir, '--out', out])
    expect(code).toBe(0)
    const steps = parseCsv(readFileSync(join(out, 'steps.csv'), 'utf8'))
    expect(steps.map((row) => row.price_source)).toEqual(Array(4).fill('stand-in claude-sonnet-4-6'))
    const summary = parseCsv(readFileSync(join(out, 'summary.csv'), 'utf8'))
    expect(summary).toHaveLength(2)
    for (const row of summary) expect(row.stand_in_cost_usd).toBe(row.cost_usd)
    const told = stdout.split('\n').filter((line) => line.includes('claude-sonnet-9-1 is not in the catalog'))
    expect(told).toHaveLength(1)
    const total = steps.reduce((sum, row) => sum + Number(row.cost_usd), 0)
    expect(told[0]).toContain(`$${total.toFixed(4)} of $${total.toFixed(4)} (4 requests)`)
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('rests on stand-in prices')
  })

  it('says nothing of stand-ins when every model is in the catalog, and writes `catalog` as the price source', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-import-out-'))
    const { stdout } = await runCli(['import', file, '--out', out])
    expect(stdout).not.toContain('is not in the catalog')
    const steps = parseCsv(readFileSync(join(out, 'steps.csv'), 'utf8'))
    expect(new Set(steps.map((row) => row.price_source))).toEqual(new Set(['catalog']))
    expect(readFileSync(join(out, 'report.html'), 'utf8')).not.toContain('rests on stand-in prices')
  })

  it('names the file and line of a corrupt line, and skips it with --lenient', async () => {
    const damaged = fixture(
      'damaged.jsonl',
      `${claudeCodeSession([{ minute: 0, read: 0, write: 6000 }])}{"type": "assistant", "message"\n`,
    )
    const strict = await runCli(['import', damaged, '--out', mkdtempSync(join(tmpdir(), 'x-'))])
    expect(strict.code).toBe(2)
    expect(strict.stderr).toContain(`${damaged}:3`)
    const lenient = await runCli(['import', damaged, '--lenient', '--out', mkdtempSync(join(tmpdir(), 'x-'))])
    expect(lenient.code).toBe(0)
    expect(lenient.stdout).toMatch(/1 lines skipped \(--lenient\)/)
  })

  it('leaves the previous run in --out complete when a later import fails on a corrupt line', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-import-keep-'))
    expect((await runCli(['import', file, '--out', out])).code).toBe(0)
    const before = readFileSync(join(out, 'steps.csv'), 'utf8')
    const damaged = fixture(
      'damaged-later.jsonl',
      `${claudeCodeSession([{ minute: 0, read: 0, write: 6000 }])}{"type": "assistant", "message"\n`,
    )
    // The rows before the corrupt line were already streamed into the new run's build folder.
    const failed = await runCli(['import', damaged, '--out', out])
    expect(failed.code).toBe(2)
    expect(readFileSync(join(out, 'steps.csv'), 'utf8')).toBe(before)
    expect(readdirSync(dirname(out)).filter((name) => name.startsWith(buildPrefixOf(out)))).toEqual([])
    expect(() => requireCompleteRun(out, 'run')).not.toThrow()
  })

  it('exports one span per request to an OTLP JSON file', async () => {
    const spans = join(mkdtempSync(join(tmpdir(), 'cachelab-import-otel-')), 'spans.json')
    const { code } = await runCli([
      'import',
      file,
      '--out',
      mkdtempSync(join(tmpdir(), 'x-')),
      '--otlp-file',
      spans,
    ])
    expect(code).toBe(0)
    const exported = JSON.parse(readFileSync(spans, 'utf8')) as {
      resourceSpans: Array<{
        scopeSpans: Array<{ spans: Array<{ kind: number; attributes: Array<{ key: string }> }> }>
      }>
    }
    const all = exported.resourceSpans.flatMap((resource) =>
      resource.scopeSpans.flatMap((scope) => scope.spans),
    )
    const clients = all.filter((span) =>
      span.attributes.some((attribute) => attribute.key === 'gen_ai.usage.cache_read.input_tokens'),
    )
    expect(clients).toHaveLength(4)
  })
})

describe('cachelab import on a DSH log with its header', () => {
  it('replays each request through the DeepSeek simulator: predicted beside recorded per step', async () => {
    const { entries } = await importTranscripts(
      [resolve('reports/observed/transcripts/testdata/dsh-session.jsonl')],
      {
        ...defaults,
        format: 'auto',
        lenient: false,
      },
    )
    const steps = entries.filter(({ row }) => !row.variant.endsWith('.compaction'))
    expect(steps.length).toBeGreaterThan(3)
    for (const { row } of steps) {
      expect(row.predictedCacheReadTokens).toBeTypeOf('number')
      expect(row.predictedCacheWriteTokens).toBe(0)
    }
    // The summarizer call of a compaction is recorded without its body: no prediction for it.
    const summarizer = entries.filter(({ row }) => row.variant.endsWith('.compaction'))
    expect(summarizer.map(({ row }) => row.predictedCacheReadTokens)).toEqual([undefined])
  })

  it('says what changed at each break, read from the two requests the log holds', async () => {
    const { entries } = await importTranscripts(
      [resolve('reports/observed/transcripts/testdata/dsh-session.jsonl')],
      { ...defaults, format: 'auto', lenient: false },
    )
    const broken = entries.filter(({ row }) => row.breakCause !== undefined)
    expect(broken.map(({ row }) => [row.breakCause, row.breakChange?.node, row.breakChange?.kind])).toEqual([
      ['config-changed', 'model', 'field'],
      ['compaction-summary', 'messages[1]', 'replaced'],
    ])
    expect(broken[0]?.row.breakChange).toMatchObject({
      before: 'deepseek-v4-flash',
      after: 'deepseek-v4-pro',
    })
    expect(broken[1]?.row.breakChange?.after).toMatch(/^Checkpoint of the earlier conversation:/)
    // A request that extends the previous one, or whose transcript holds no body, has none.
    expect(
      entries.filter(({ row }) => row.breakCause === undefined && row.breakChange !== undefined),
    ).toEqual([])
  })
})

const SAMPLES = resolve('..', 'shared', 'fixtures', 'transcripts')

describe.skipIf(!existsSync(SAMPLES))('cachelab import on every real sample', () => {
  it('imports them all (the damaged ones with --lenient), sidechains and the fork child as sessions of their own', async () => {
    const result = await importTranscripts([SAMPLES], { ...defaults, format: 'auto', lenient: true })
    expect(result.files).toHaveLength(20)
    expect(result.problems.map((problem) => problem.where)).toEqual([
      expect.stringMatching(/pi-badlogic-compact\.jsonl:1013$/),
      expect.stringMatching(/pi-badlogic-session-2025-12-17\.jsonl:440$/),
    ])
    const sessions = new Set(result.entries.map(({ row }) => row.variant))
    expect([...sessions].filter((session) => session.includes('.sidechain-')).length).toBeGreaterThan(0)
    expect([...sessions].filter((session) => session.includes('.subagent-')).length).toBe(1)
    // The Codex fork child counts only its own requests, never its parent's replayed usage.
    const child = result.entries.filter(({ row }) => row.variant === 'child-session')
    expect(child).toHaveLength(16)
    // Buckets stay disjoint on every recorded request.
    for (const { row } of result.entries)
      expect(row.cacheReadTokens + row.cacheWriteTokens + row.uncachedTokens).toBe(row.inputTokens)
  })

  it('calls ttl-expired on the 1-hour Claude Code session only past an hour of idle', async () => {
    const file = join(SAMPLES, 'claude-code-daaain-worktrees-main.jsonl')
    const { entries } = await importTranscripts([file], { ...defaults, format: 'auto', lenient: false })
    for (const { rewrite } of entries.filter(({ rewrite }) => rewrite.class === 'ttl-expired'))
      expect(rewrite.gapSeconds).toBeGreaterThan(3600)
  })
})

describe('transcriptFiles', () => {
  it("walks into folders for JSONL files and opencode's database, and takes any file named", () => {
    const folder = mkdtempSync(join(tmpdir(), 'cachelab-import-walk-'))
    mkdirSync(join(folder, 'opencode'))
    for (const name of ['opencode/opencode.db', 'opencode/opencode.db-wal', 'a.jsonl', 'notes.txt', 'x.json'])
      writeFileSync(join(folder, name), '')
    expect(transcriptFiles([folder])).toEqual([
      join(folder, 'a.jsonl'),
      join(folder, 'opencode', 'opencode.db'),
    ])
    expect(transcriptFiles([join(folder, 'x.json')])).toEqual([join(folder, 'x.json')])
  })

  it('walks a folder a symlink leads back to once, and names a link that leads nowhere', () => {
    const folder = mkdtempSync(join(tmpdir(), 'cachelab-import-walk-'))
    mkdirSync(join(folder, 'sessions'))
    writeFileSync(join(folder, 'sessions', 'a.jsonl'), '')
    symlinkSync(folder, join(folder, 'sessions', 'up'))
    expect(transcriptFiles([folder])).toEqual([join(folder, 'sessions', 'a.jsonl')])
    symlinkSync(join(folder, 'loop'), join(folder, 'loop'))
    expect(() => transcriptFiles([folder])).toThrow(`${join(folder, 'loop')}: cannot read (ELOOP)`)
  })
})

describe('cachelab import with no path', () => {
  it("finds the agents' folders under the home, says which it read, and --agent narrows them", async () => {
    const home = mkdtempSync(join(tmpdir(), 'cachelab-import-home-'))
    const claude = join(home, '.claude', 'projects', '-work-app')
    mkdirSync(claude, { recursive: true })
    writeFileSync(join(claude, `${SESSION}.jsonl`), claudeCodeSession([{ minute: 0, read: 0, write: 6000 }]))
    const out = mkdtempSync(join(tmpdir(), 'cachelab-import-out-'))
    const found = await withEnv({ HOME: home, CLAUDE_CONFIG_DIR: undefined, CODEX_HOME: undefined }, () =>
      runCli(['import', '--out', out]),
    )
    expect(found.code).toBe(0)
    expect(found.stdout).toContain(`read claude-code (1 file in ${join(home, '.claude', 'projects')})`)
    expect(found.stdout).toMatch(/1 requests from 1 files/)
    const none = await withEnv({ HOME: home, CLAUDE_CONFIG_DIR: undefined, CODEX_HOME: undefined }, () =>
      runCli(['import', '--agent', 'codex', '--out', out]),
    )
    expect(none.code).toBe(2)
    expect(none.stderr).toContain(`no agent transcripts found (looked in ${join(home, '.codex', 'sessions')}`)
  })
})

describe('what cachelab import leaves out', () => {
  it('refuses a --format the file plainly is not, naming what it looks like', async () => {
    const file = fixture('session.jsonl', claudeCodeSession([{ minute: 0, read: 0, write: 6000 }]))
    const wrong = await runCli([
      'import',
      file,
      '--format',
      'codex',
      '--out',
      mkdtempSync(join(tmpdir(), 'x-')),
    ])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain('--format codex, but it looks like a claude-code transcript')
  })

  it("takes --format kilo for a `kilo export`, which has opencode's shape and is detected as opencode's", async () => {
    // Its session's directory moved to a workspace whose kilo.json names the provider's package.
    const exported = JSON.parse(
      readFileSync('reports/observed/transcripts/testdata/kilo-export.json', 'utf8'),
    )
    exported.info.directory = dirname(
      fixture('kilo.json', '{ "provider": { "cachelab": { "npm": "@ai-sdk/openai-compatible" } } }'),
    )
    const file = join(exported.info.directory, 'session.json')
    writeFileSync(file, JSON.stringify(exported))
    expect(await detectFormat(file)).toBe('opencode')
    const { entries } = await importTranscripts([file], { ...defaults, format: 'kilo', lenient: false })
    expect(entries.map(({ row }) => row.scenario)).toEqual(['kilo', 'kilo'])
    const refused = await importTranscripts([file], { ...defaults, format: 'pi', lenient: true }).catch(
      (error: Error) => error.message,
    )
    expect(refused).toContain('--format pi, but it looks like a opencode transcript')
  })

  it('reads only the requests between --since and --until, the last day included, and counts the rest', async () => {
    const file = fixture(
      'session.jsonl',
      claudeCodeSession([
        { minute: 0, read: 0, write: 6000 },
        { minute: 60 * 24, read: 6000, write: 100 },
        { minute: 60 * 48, read: 6100, write: 100 },
      ]),
    )
    const { code, stdout, stderr } = await runCli([
      'import',
      file,
      '--since',
      '2026-11-03',
      '--until',
      '20261103',
      '--out',
      mkdtempSync(join(tmpdir(), 'x-')),
    ])
    expect(code).toBe(0)
    expect(stdout).toMatch(/import-\w+: 1 requests from 1 files/)
    expect(stderr).toContain('2 requests outside --since/--until left out')
    const bad = await runCli(['import', file, '--since', 'last week'])
    expect(bad.code).toBe(2)
  })
})

describe('requests an agent counted and its transcript lacks', () => {
  it("are reported as unrecorded, with the cost by the agent's own total", async () => {
    const total = JSON.stringify({
      type: 'cost-state',
      sessionId: SESSION,
      totalCostUSD: 1.25,
      modelUsage: {
        'claude-sonnet-4-6': {
          inputTokens: 24,
          outputTokens: 80,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 12_000,
        },
      },
    })
    const file = fixture(
      'session.jsonl',
      `${claudeCodeSession([{ minute: 0, read: 0, write: 6000 }])}${total}\n`,
    )
    const { code, stdout, stderr } = await runCli([
      'import',
      file,
      '--out',
      mkdtempSync(join(tmpdir(), 'x-')),
    ])
    expect(code).toBe(0)
    const line = `unrecorded in the transcript: claude-code · ${SESSION}: $1.2`
    expect(stdout).toContain(line)
    expect(stderr).toContain(line)
    expect(stdout).toContain('6,000 written, 12 uncached, 40 output tokens')
  })
})

describe('cachelab import --json', () => {
  it('prints the sessions, the rewrites table and the unrecorded requests as JSON that parses, and nothing else', async () => {
    const total = JSON.stringify({
      type: 'cost-state',
      sessionId: SESSION,
      totalCostUSD: 1.25,
      modelUsage: {},
    })
    const file = fixture(
      'session.jsonl',
      `${claudeCodeSession([
        { minute: 0, read: 0, write: 6000 },
        { minute: 9, read: 0, write: 6500 },
      ])}${total}\n`,
    )
    const out = mkdtempSync(join(tmpdir(), 'x-'))
    const { code, stdout } = await runCli(['import', file, '--out', out, '--json'])
    expect(code).toBe(0)
    const document = JSON.parse(stdout)
    expect(document).toMatchObject({ format: 'cachelab-import', version: 1, outDir: out, requests: 2 })
    expect(document.sessions).toEqual([
      expect.objectContaining({
        scenario: 'claude-code',
        variant: SESSION,
        provider: 'anthropic',
        requests: 2,
      }),
    ])
    expect(document.rewrites.map((entry: { class: string }) => entry.class)).toEqual([
      'ttl-expired',
      'session-start',
    ])
    expect(document.unrecorded).toEqual([
      expect.objectContaining({ format: 'claude-code', session: SESSION, agentUsd: 1.25 }),
    ])
    expect(document.unrecorded[0].unrecordedUsd).toBeCloseTo(1.25 - document.unrecorded[0].recordedUsd, 10)
    expect(document.written).toContain('rewrites.csv')
  })
})

describe('the transcript files under a folder', () => {
  it("takes an older Gemini CLI's chats/session-*.json, and no other .json", async () => {
    const { transcriptFiles } = await import('../reports/import.ts')
    const root = mkdtempSync(join(tmpdir(), 'cachelab-files-'))
    mkdirSync(join(root, 'project', 'chats'), { recursive: true })
    for (const name of [
      'chats/session-a.json',
      'chats/session-b.jsonl',
      'chats/other.json',
      'session-c.json',
    ])
      writeFileSync(join(root, 'project', name), '{}\n')
    expect(transcriptFiles([root]).map((file) => file.slice(root.length + 1))).toEqual([
      'project/chats/session-a.json',
      'project/chats/session-b.jsonl',
    ])
  })
})
