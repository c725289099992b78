// opencode sessions, from its SQLite database (`opencode.db`, every session it holds) or from one
// session's `opencode export <id>` JSON (`{info, messages: [{info, parts}]}`). Each `step-finish` part of
// an assistant message is one provider request (a message spans as many steps as the model called tools
// in a row); a message without them (older versions) is one request by its own `tokens`. A `task`
// subagent is a session with a `parentID`; a summary message is a compaction. opencode does not record
// its title requests. See notes/2026-12-02-opencode-sqlite.md. Its fork Kilo Code keeps the same records
// under its own names (kilo.ts): a flavor says which.

import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import type { JsonValue, ProviderId, Usage } from '../../../harness/types.ts'
import { findCompatible } from '../../../providers/compatible.ts'
import { type Fields, fieldsOf, isoOf, listOf, numberOf, textOf } from './fields.ts'
import { isSqliteFile } from './file-head.ts'
import { recordProblem, SkipTally } from './lines.ts'
import { openOpencodeDatabase } from './opencode-database.ts'
import type {
  ObservedRequest,
  ReadOptions,
  TranscriptEvent,
  TranscriptFormat,
  TranscriptReader,
} from './types.ts'

/** opencode's own provider ids (models.dev's) that name one wire API. */
const PROVIDER_IDS: Readonly<Record<string, ProviderId>> = {
  anthropic: 'anthropic',
  // opencode speaks the Responses API to OpenAI.
  openai: 'openai-responses',
  deepseek: 'deepseek',
  google: 'gemini',
  'amazon-bedrock': 'bedrock',
}

/** The AI SDK package a configured provider names (`provider.<id>.npm`), by the wire API it speaks. */
const NPM_APIS: Readonly<Record<string, ProviderId>> = {
  '@ai-sdk/anthropic': 'anthropic',
  '@ai-sdk/openai': 'openai-responses',
  '@ai-sdk/openai-compatible': 'openai-chat',
  '@ai-sdk/deepseek': 'deepseek',
  '@ai-sdk/google': 'gemini',
  '@ai-sdk/amazon-bedrock': 'bedrock',
}

/** What tells opencode and a fork of it apart in what they keep: the format and where its configs are. */
export interface OpencodeFlavor {
  /** The format, and the agent its rows name (`<format>/<version>`). */
  format: Extract<TranscriptFormat, 'opencode' | 'kilo'>
  /** Its folder under `$XDG_CONFIG_HOME`, and the global config files there, the later winning. */
  configFolder: string
  globalConfigs: readonly string[]
  /** The config files of each folder from the root down to a session's directory, the later winning. */
  projectConfigs: readonly string[]
}

export const OPENCODE: OpencodeFlavor = {
  format: 'opencode',
  configFolder: 'opencode',
  globalConfigs: ['config.json', 'opencode.json', 'opencode.jsonc'],
  projectConfigs: ['opencode.json', 'opencode.jsonc'],
}

/** A JSONC text (opencode's config allows comments and trailing commas) as JSON text. */
export function jsoncText(text: string): string {
  let out = ''
  let index = 0
  while (index < text.length) {
    const char = text[index] as string
    if (char === '"') {
      const end = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(index))?.[0] ?? text.slice(index)
      out += end
      index += end.length
    } else if (text.startsWith('//', index)) {
      const end = text.indexOf('\n', index)
      index = end === -1 ? text.length : end
    } else if (text.startsWith('/*', index)) {
      const end = text.indexOf('*/', index + 2)
      index = end === -1 ? text.length : end + 2
    } else {
      out += char
      index += 1
    }
  }
  return out.replace(/,(\s*[}\]])/g, '$1')
}

/**
 * The `npm` package of each provider the config files in force in `directory` declare: the global ones
 * (`$XDG_CONFIG_HOME/opencode/`), then each `opencode.json(c)` from the filesystem root down to the
 * directory, the nearer winning, as opencode merges them (a fork's own names, by its flavor).
 */
export function configuredPackages(
  directory: string | undefined,
  flavor: OpencodeFlavor = OPENCODE,
): Map<string, string> {
  const configHome = process.env.XDG_CONFIG_HOME || join(homedir(), '.config')
  const files = flavor.globalConfigs.map((name) => join(configHome, flavor.configFolder, name))
  const folders: string[] = []
  for (let folder = directory; folder !== undefined; ) {
    folders.unshift(folder)
    const up = dirname(folder)
    folder = up === folder ? undefined : up
  }
  for (const folder of folders) files.push(...flavor.projectConfigs.map((name) => join(folder, name)))
  const packages = new Map<string, string>()
  for (const file of files) {
    let config: Fields
    try {
      config = fieldsOf(JSON.parse(jsoncText(readFileSync(file, 'utf8'))))
    } catch {
      continue
    }
    for (const [id, provider] of Object.entries(fieldsOf(config.provider))) {
      const npm = textOf(fieldsOf(provider).npm)
      if (npm !== undefined) packages.set(id, npm)
    }
  }
  return packages
}

/**
 * The cachelab provider of an opencode `providerID`: by the package its config names for it, else by
 * opencode's own ids, else a provider of cachelab's catalog of the same id. Undefined when none tells.
 */
export function opencodeProvider(providerId: string, npm: string | undefined): ProviderId | undefined {
  const byPackage = npm === undefined ? undefined : NPM_APIS[npm]
  if (byPackage === 'openai-chat' && findCompatible(providerId) !== undefined) return providerId as ProviderId
  if (byPackage !== undefined) return byPackage
  const known = PROVIDER_IDS[providerId]
  if (known !== undefined) return known
  return findCompatible(providerId) !== undefined ? (providerId as ProviderId) : undefined
}

/**
 * opencode tokens in cachelab's buckets: its `input` excludes the cache (it subtracts reads and writes
 * from the provider's prompt count) and its `output` excludes reasoning, so `input` here is
 * `input + cache.read + cache.write` and `output` is `output + reasoning`. opencode writes
 * `cache.write: 0` for providers that report no writes; only Anthropic's and Bedrock's zero is a count.
 */
export function opencodeUsage(raw: unknown, provider: ProviderId): Usage | undefined {
  const tokens = fieldsOf(raw)
  const uncached = numberOf(tokens.input)
  const output = numberOf(tokens.output)
  if (uncached === undefined || output === undefined) return undefined
  const cache = fieldsOf(tokens.cache)
  const cacheRead = numberOf(cache.read)
  const recordedWrite = numberOf(cache.write)
  const writes = provider === 'anthropic' || provider === 'bedrock' || (recordedWrite ?? 0) > 0
  const cacheWrite = writes ? recordedWrite : undefined
  const reasoning = numberOf(tokens.reasoning)
  return {
    input: uncached + (cacheRead ?? 0) + (cacheWrite ?? 0),
    uncached,
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    output: output + (reasoning ?? 0),
    ...(reasoning !== undefined ? { reasoning } : {}),
    raw: raw as JsonValue,
  }
}

/** A session as both sources give it. */
export interface OpencodeSessionInfo {
  id: string
  parentId?: string
  version?: string
  directory?: string
}

/** A message as both sources give it: its info, and its step-finish parts in order. */
export interface OpencodeMessage {
  /** Where the message is (`file:message <id>`). */
  where: string
  info: Fields
  steps: { where: string; part: Fields; time?: number; id?: string }[]
}

/** One conversation: a session, or a compaction of one. */
interface Conversation {
  name: string
  parent: string | undefined
  kind: ObservedRequest['kind']
  turn: number
  step: number
  model: string | undefined
  pending: TranscriptEvent[]
}

/** Why requests were not counted, by reason, with the first place of each. */

/** The fold of opencode messages: fed each session's messages in order, it answers their requests. */
export class OpencodeLog {
  private readonly sessions = new Map<string, OpencodeSessionInfo>()
  private readonly conversations = new Map<string, Conversation>()
  private readonly compactions = new Map<string, number>()
  private readonly packages = new Map<string | undefined, Map<string, string>>()
  private readonly skips = new SkipTally()

  constructor(
    private readonly options: ReadOptions,
    private readonly flavor: OpencodeFlavor = OPENCODE,
  ) {}

  /** Tell the fold of a session before its messages. */
  session(info: OpencodeSessionInfo): void {
    this.sessions.set(info.id, info)
  }

  /** Take one message of a session; returns the requests it records. */
  accept(sessionId: string, message: OpencodeMessage): ObservedRequest[] {
    const info = message.info
    const main = this.conversation(sessionId)
    if (info.role === 'user') {
      main.turn += 1
      main.step = 0
      return []
    }
    if (info.role !== 'assistant') return []
    // A summary message is the compaction's own request; the session's next request follows it.
    const compacting = info.summary === true || info.mode === 'compaction' || info.agent === 'compaction'
    let conversation = main
    if (compacting) {
      // Numbered in the order of the session the capture puts it in: a subagent's, its parent's.
      const root = main.parent ?? sessionId
      const number = (this.compactions.get(root) ?? 0) + 1
      this.compactions.set(root, number)
      conversation = {
        name: `${root}.compaction-${number}`,
        parent: root,
        kind: 'compaction',
        turn: 1,
        step: 0,
        model: undefined,
        pending: [],
      }
      main.pending.push({ kind: 'compaction', detail: `${this.flavor.format} summary` })
    }
    const session = this.sessions.get(sessionId)
    const providerId = textOf(info.providerID) ?? 'unknown'
    const provider = this.provider(providerId, session?.directory)
    const model = textOf(info.modelID) ?? 'unknown'
    const created = numberOf(fieldsOf(info.time).created)
    const messageId = textOf(info.id)
    const steps: OpencodeMessage['steps'] =
      message.steps.length > 0
        ? message.steps
        : [
            {
              where: message.where,
              part: { tokens: info.tokens },
              ...(messageId !== undefined ? { id: messageId } : {}),
            },
          ]
    const requests: ObservedRequest[] = []
    let startedAt = created
    for (const step of steps) {
      conversation.step += 1
      const time = startedAt
      startedAt = step.time ?? startedAt
      if (provider === undefined) {
        this.skips.add(
          step.where,
          `to ${this.flavor.format} provider ${providerId} skipped: no wire API known for it (not an opencode provider id, and no ${this.flavor.projectConfigs.join(' or ')} names its npm package)`,
        )
        continue
      }
      const usage = opencodeUsage(step.part.tokens, provider)
      if (usage === undefined) {
        this.problem(step.where, 'step without input and output tokens')
        continue
      }
      // A step stopped before the provider answered records all zeros: nothing reached a cache.
      if (usage.input === 0 && usage.output === 0) {
        this.skips.add(step.where, 'with all-zero usage (aborted or failed before an answer): not counted')
        continue
      }
      const events = conversation.pending
      conversation.pending = []
      if (conversation.model !== undefined && conversation.model !== model)
        events.push({ kind: 'model-switch', from: conversation.model, to: model })
      conversation.model = model
      requests.push({
        format: this.flavor.format,
        source: step.where,
        session: conversation.name,
        ...(conversation.parent !== undefined ? { parent: conversation.parent } : {}),
        ...(conversation.kind !== undefined ? { kind: conversation.kind } : {}),
        ...(session?.version !== undefined ? { agent: `${this.flavor.format}/${session.version}` } : {}),
        provider,
        model,
        time: isoOf(time) ?? new Date(0).toISOString(),
        usage,
        events,
        ...(conversation.turn > 0 ? { turn: conversation.turn } : {}),
        step: conversation.step,
        ...(step.id !== undefined ? { requestId: step.id } : {}),
      })
    }
    return requests
  }

  /** Report what was left uncounted, once everything is read. */
  finish(): void {
    this.skips.report(this.options)
  }

  /** Problems with a record: fatal unless lenient. */
  problem(where: string, message: string): void {
    recordProblem(this.options, where, message)
  }

  private conversation(sessionId: string): Conversation {
    let conversation = this.conversations.get(sessionId)
    if (conversation === undefined) {
      // Named as a capture names it: a subagent under the session that started it.
      const parent = this.sessions.get(sessionId)?.parentId
      conversation = {
        name: parent === undefined ? sessionId : `${parent}.subagent-${sessionId}`,
        parent,
        kind: parent === undefined ? undefined : 'subagent',
        turn: 0,
        step: 0,
        model: undefined,
        pending: [],
      }
      this.conversations.set(sessionId, conversation)
    }
    return conversation
  }

  private provider(providerId: string, directory: string | undefined): ProviderId | undefined {
    let packages = this.packages.get(directory)
    if (packages === undefined) {
      packages = configuredPackages(directory, this.flavor)
      this.packages.set(directory, packages)
    }
    return opencodeProvider(providerId, packages.get(providerId))
  }
}

/** A stored JSON text as an object, or a problem (fatal unless lenient) and undefined. */
function parsed(log: OpencodeLog, where: string, text: string): Fields | undefined {
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Fields
  } catch {}
  log.problem(where, 'not a JSON object')
  return undefined
}

/** Every session of an opencode (or fork's) database, streamed message by message. */
async function* readDatabase(
  file: string,
  options: ReadOptions,
  flavor: OpencodeFlavor,
): AsyncGenerator<ObservedRequest> {
  const log = new OpencodeLog(options, flavor)
  const database = openOpencodeDatabase(file)
  try {
    for (const session of database.sessions)
      log.session({
        id: session.id,
        ...(session.parentId !== undefined ? { parentId: session.parentId } : {}),
        ...(session.version !== undefined ? { version: session.version } : {}),
        ...(session.directory !== undefined ? { directory: session.directory } : {}),
      })
    for (const row of database.messages()) {
      const where = `${file}:message ${row.id}`
      const info = parsed(log, where, row.data)
      if (info === undefined) continue
      const steps: OpencodeMessage['steps'] = []
      for (const step of row.steps) {
        const stepWhere = `${file}:part ${step.id}`
        const part = parsed(log, stepWhere, step.data)
        if (part !== undefined) steps.push({ where: stepWhere, part, time: step.timeCreated, id: step.id })
      }
      yield* log.accept(row.sessionId, { where, info, steps })
    }
  } finally {
    database.close()
  }
  log.finish()
}

/** One session's `opencode export` JSON, read whole (it is one object). */
async function* readExport(
  file: string,
  options: ReadOptions,
  flavor: OpencodeFlavor,
): AsyncGenerator<ObservedRequest> {
  const log = new OpencodeLog(options, flavor)
  const value = parsed(log, `${file}:1`, readFileSync(file, 'utf8'))
  const info = fieldsOf(value?.info)
  const id = textOf(info.id)
  if (value === undefined) return
  if (id === undefined || !Array.isArray(value.messages)) {
    log.problem(`${file}:1`, `not a session export of ${flavor.format} (no info.id and messages)`)
    return
  }
  const parentId = textOf(info.parentID)
  const version = textOf(info.version)
  const directory = textOf(info.directory)
  log.session({
    id,
    ...(parentId !== undefined ? { parentId } : {}),
    ...(version !== undefined ? { version } : {}),
    ...(directory !== undefined ? { directory } : {}),
  })
  for (const [index, entry] of listOf(value.messages).entries()) {
    const message = fieldsOf(entry)
    const where = `${file}:messages[${index}]`
    const steps: OpencodeMessage['steps'] = []
    for (const [partIndex, part] of listOf(message.parts).entries()) {
      const fields = fieldsOf(part)
      if (fields.type !== 'step-finish') continue
      const partId = textOf(fields.id)
      steps.push({
        where: `${where}.parts[${partIndex}]`,
        part: fields,
        ...(partId !== undefined ? { id: partId } : {}),
      })
    }
    yield* log.accept(textOf(fieldsOf(message.info).sessionID) ?? id, {
      where,
      info: fieldsOf(message.info),
      steps,
    })
  }
  log.finish()
}

/** The reader of a flavor's database (every session in it) or of one session's export JSON. */
export function opencodeFamilyReader(flavor: OpencodeFlavor): TranscriptReader {
  return (file, options) =>
    isSqliteFile(file) ? readDatabase(file, options, flavor) : readExport(file, options, flavor)
}

/** Read an opencode database (every session in it) or one session's `opencode export` JSON. */
export const readOpencode: TranscriptReader = opencodeFamilyReader(OPENCODE)
