// A synthetic Claude Code corpus for `npm run bench`: sessions written as Claude Code writes them under
// `<config>/projects/<project>/<sessionId>.jsonl`, a subagent's beside them under
// `<sessionId>/subagents/`, with the line types and the sizes of the real samples (notes/
// 2026-12-05-import-against-ccusage.md has the figures it follows): a response written as one assistant
// line per content block, each repeating the usage; tool results of a few hundred bytes to 100 KB, code
// and logs with quotes, tabs, newlines and non-ASCII text; thinking with its base64 signature; file
// snapshots, a compaction, a model switch. Made from a seed, so every run measures the same bytes; none of
// it is anyone's data.

import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { type Random, seededRandom } from '../../../harness/random.ts'

/** One file of the corpus: its path under the config folder, and its text. */
export interface CorpusFile {
  path: string
  text: string
}

const WORDS = (
  'const let return function import export await async if else for while true false null undefined ' +
  'cache prefix token session request response model system user assistant tool result error warning ' +
  'build test check lint format commit branch merge review change file line column path value key ' +
  'café naïve → ✓ 日本語 Größe 😀 ±0.5'
).split(' ')
const PUNCTUATION = [
  '(',
  ')',
  '{',
  '}',
  '[',
  ']',
  ';',
  ',',
  '.',
  ':',
  '=',
  '=>',
  '"',
  "'",
  '`',
  '\\',
  '/',
  '<',
  '>',
]
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

/** A whole number from `low` to `high` inclusive. */
const between = (random: Random, low: number, high: number) =>
  low + Math.floor(random.next() * (high - low + 1))
const pick = <T>(random: Random, items: readonly T[]): T =>
  items[Math.floor(random.next() * items.length)] as T

/** Text of about `bytes` characters that reads like code, logs or prose: lines, indents, quotes and tabs. */
function text(random: Random, bytes: number, code: boolean): string {
  const parts: string[] = []
  let length = 0
  let column = 0
  while (length < bytes) {
    const part =
      code && random.next() < 0.3
        ? pick(random, PUNCTUATION)
        : random.next() < 0.05
          ? String(between(random, 0, 99_999))
          : pick(random, WORDS)
    parts.push(part)
    length += part.length
    column += part.length
    if (column > between(random, 40, 100)) {
      const indent = code ? '  '.repeat(between(random, 0, 4)) : ''
      parts.push(random.next() < 0.1 ? '\n\t' : `\n${indent}`)
      column = 0
    } else parts.push(' ')
    length += 1
  }
  return parts.join('')
}

/** A base64 string of `bytes` characters (a thinking block's signature). */
function base64(random: Random, bytes: number): string {
  let out = ''
  for (let index = 0; index < bytes; index += 1) out += BASE64[Math.floor(random.next() * 64)]
  return out
}

/** Texts drawn once and shared by every session: a corpus of hundreds of MB is made in seconds. */
interface Pool {
  /** Tool results, JSON-escaped, their sizes spread as the samples' are (most under 2 KB, a few near 100 KB). */
  results: string[]
  prompts: string[]
  prose: string[]
  thinking: string[]
  signatures: string[]
  commands: string[]
}

let pool: Pool | undefined

function poolOf(): Pool {
  if (pool !== undefined) return pool
  const random = seededRandom(2026_12_05)
  const many = (count: number, make: () => string) =>
    Array.from({ length: count }, () => JSON.stringify(make()))
  // Log-normal sizes: a median of about 800 characters, a tail to 100 KB.
  const resultSize = () => Math.min(100_000, Math.round(Math.exp(6.7 + 1.3 * normal(random))))
  pool = {
    results: many(400, () => text(random, resultSize(), random.next() < 0.7)),
    prompts: many(64, () => text(random, between(random, 40, 1500), false)),
    prose: many(64, () => text(random, between(random, 30, 1500), false)),
    thinking: many(64, () => text(random, between(random, 50, 3000), false)),
    signatures: many(64, () => base64(random, between(random, 280, 6000))),
    commands: many(64, () => text(random, between(random, 20, 3000), true)),
  }
  return pool
}

/** A standard normal draw (Box–Muller). */
function normal(random: Random): number {
  return Math.sqrt(-2 * Math.log(1 - random.next())) * Math.cos(2 * Math.PI * random.next())
}

/**
 * Where each copy of a session writes its number (three digits) into every id, so that the copies of the
 * 100-times corpus are sessions and requests of their own to both tools. No generated text holds a `@`.
 */
const COPY = '@@@'

/** A version-4-shaped id from the generator, its first three digits the copy's. */
function uuid(random: Random): string {
  let hex = ''
  for (let index = 0; index < 29; index += 1) hex += Math.floor(random.next() * 16).toString(16)
  return `${COPY}${hex.slice(0, 5)}-${hex.slice(5, 9)}-4${hex.slice(9, 12)}-8${hex.slice(12, 15)}-${hex.slice(15, 27)}`
}

/** A provider id (`msg_`, `req_`, `toolu_`) with the copy's number in it. */
const providerId = (random: Random, prefix: string) =>
  `${prefix}${COPY}${base64(random, 20).replace(/[+/]/g, 'x')}`

const MODELS = ['claude-opus-4-5-20251101', 'claude-sonnet-4-20250514']

/** The lines of one session (or one subagent's, with `agentId`), ending at about `requests` requests. */
function sessionLines(
  random: Random,
  shared: { sessionId: string; cwd: string; agentId?: string },
  requests: number,
  events: { compaction: boolean; modelSwitch: boolean; toolsDelta: boolean },
): string[] {
  const texts = poolOf()
  const lines: string[] = []
  const sidechain = shared.agentId !== undefined
  const base =
    `"isSidechain":${sidechain},"userType":"external","cwd":"${shared.cwd}","sessionId":"${shared.sessionId}",` +
    `"version":"2.1.${between(random, 10, 60)}","gitBranch":"main"${sidechain ? `,"agentId":"${shared.agentId}"` : ''}`
  let parent: string | null = null
  let clock = Date.UTC(2026, between(random, 0, 10), between(random, 1, 28), between(random, 6, 20))
  let model = pick(random, MODELS)
  const hourLong = random.next() < 0.3
  let context = between(random, 8_000, 20_000)
  const switchAt = events.modelSwitch ? between(random, 10, requests - 5) : -1
  const compactAt = events.compaction ? between(random, 20, requests - 5) : -1
  let made = 0
  const line = (fields: string) => {
    const uuidOf = uuid(random)
    clock += between(random, 500, 40_000)
    lines.push(
      `{"parentUuid":${parent === null ? 'null' : `"${parent}"`},${base},${fields},"uuid":"${uuidOf}","timestamp":"${new Date(clock).toISOString()}"}`,
    )
    parent = uuidOf
  }
  if (!sidechain && random.next() < 0.3)
    lines.push(`{"type":"summary","summary":${pick(random, texts.prose)},"leafUuid":"${uuid(random)}"}`)
  if (events.toolsDelta) {
    const names = Array.from({ length: between(random, 2, 12) }, (_, index) => `"mcp__tool_${index}"`).join(
      ',',
    )
    line(
      `"type":"attachment","attachment":{"type":"deferred_tools_delta","addedNames":[${names}],` +
        `"addedLines":[${names}],"removedNames":[]}`,
    )
  }
  while (made < requests) {
    line(`"type":"user","message":{"role":"user","content":${pick(random, texts.prompts)}}`)
    const steps = between(random, 2, 12)
    for (let step = 1; step <= steps && made < requests; step += 1) {
      made += 1
      if (made === switchAt)
        model = pick(
          random,
          MODELS.filter((other) => other !== model),
        )
      if (made === compactAt) {
        line(
          `"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,` +
            `"level":"info","compactMetadata":{"trigger":"auto","preTokens":${context}}`,
        )
        line(
          `"type":"user","isCompactSummary":true,"message":{"role":"user","content":${pick(random, texts.thinking)}}`,
        )
        context = between(random, 8_000, 20_000)
      }
      const id = providerId(random, 'msg_01')
      const requestId = providerId(random, 'req_011')
      const toolId = providerId(random, 'toolu_01')
      const calls = step < steps
      const blocks: string[] = []
      if (random.next() < 0.25)
        blocks.push(
          `{"type":"thinking","thinking":${pick(random, texts.thinking)},"signature":${pick(random, texts.signatures)}}`,
        )
      if (!calls || random.next() < 0.4) blocks.push(`{"type":"text","text":${pick(random, texts.prose)}}`)
      if (calls)
        blocks.push(
          `{"type":"tool_use","id":"${toolId}","name":"${pick(random, ['Bash', 'Read', 'Edit', 'Grep'])}","input":{"command":${pick(random, texts.commands)}}}`,
        )
      // A new model reads nothing of the old one's cache; a compacted conversation keeps only its system
      // prompt and tools cached. What is not read is written again, with what the request adds.
      const read = made === switchAt ? 0 : made === compactAt ? Math.min(context, 4_000) : context
      const added = between(random, 50, 4_000)
      const written = context - read + added
      context += added
      let output = between(random, 1, 30)
      for (const [index, block] of blocks.entries()) {
        output += between(random, 20, 600)
        const write = hourLong
          ? `"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":${written}`
          : `"ephemeral_5m_input_tokens":${written},"ephemeral_1h_input_tokens":0`
        line(
          `"message":{"model":"${model}","id":"${id}","type":"message","role":"assistant","content":[${block}],` +
            `"stop_reason":${index === blocks.length - 1 ? (calls ? '"tool_use"' : '"end_turn"') : 'null'},"stop_sequence":null,` +
            `"usage":{"input_tokens":${between(random, 1, 12)},"cache_creation_input_tokens":${written},` +
            `"cache_read_input_tokens":${read},"cache_creation":{${write}},"output_tokens":${output},` +
            `"service_tier":"standard"}},"requestId":"${requestId}","type":"assistant"`,
        )
      }
      if (calls) {
        const result = pick(random, texts.results)
        line(
          `"type":"user","message":{"role":"user","content":[{"tool_use_id":"${toolId}","type":"tool_result",` +
            `"content":${result},"is_error":false}]},"toolUseResult":{"stdout":${result},"stderr":"","interrupted":false,"isImage":false}`,
        )
        context += Math.round(result.length / 4)
      }
      if (!sidechain && made % 10 === 0)
        lines.push(
          `{"type":"file-history-snapshot","messageId":"${uuid(random)}","snapshot":{"messageId":"${uuid(random)}",` +
            `"trackedFileBackups":{},"timestamp":"${new Date(clock).toISOString()}"},"isSnapshotUpdate":false}`,
        )
    }
  }
  return lines
}

/**
 * The files of a corpus of `sessions` sessions, session `index` drawn from its own seed (about 75 requests
 * and 0.7 MB each, every third with a subagent's file), written `copies` times over with the copy's number
 * in every id: the 100-times corpus is the small one 100 times. The same arguments give the same bytes.
 */
export function* claudeCodeCorpus(sessions: number, copies = 1): Generator<CorpusFile> {
  const files: Array<{ path: string[]; text: string[] }> = []
  for (let index = 0; index < sessions; index += 1) {
    const random = seededRandom(0x5e55_0000 + index)
    const sessionId = uuid(random)
    const project = `-home-dev-project-${index}`
    const cwd = `/home/dev/project-${index}`
    // A compaction in every third session, a model switch in every fourth, a tool-list change in every other.
    const events = { compaction: index % 3 === 1, modelSwitch: index % 4 === 2, toolsDelta: index % 2 === 0 }
    const lines = sessionLines(random, { sessionId, cwd }, between(random, 40, 110), events)
    const split = (path: string, text: string[]) => ({
      path: path.split(COPY),
      text: `${text.join('\n')}\n`.split(COPY),
    })
    files.push(split(join('projects', project, `${sessionId}.jsonl`), lines))
    if (index % 3 === 0) {
      const agentId = `a${COPY}${base64(random, 14).replace(/[+/]/g, '0').toLowerCase()}`
      const agent = sessionLines(random, { sessionId, cwd, agentId }, between(random, 10, 40), {
        compaction: false,
        modelSwitch: false,
        toolsDelta: false,
      })
      files.push(split(join('projects', project, sessionId, 'subagents', `agent-${agentId}.jsonl`), agent))
    }
  }
  for (let copy = 0; copy < copies; copy += 1) {
    const number = String(copy).padStart(3, '0')
    for (const file of files) yield { path: file.path.join(number), text: file.text.join(number) }
  }
}

/** Write the corpus under `dir` (Claude Code's config folder); gives its files and bytes. */
export function writeClaudeCodeCorpus(
  dir: string,
  sessions: number,
  copies = 1,
): { files: number; bytes: number } {
  let files = 0
  let bytes = 0
  for (const file of claudeCodeCorpus(sessions, copies)) {
    const path = join(dir, file.path)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, file.text)
    files += 1
    bytes += Buffer.byteLength(file.text)
  }
  return { files, bytes }
}
