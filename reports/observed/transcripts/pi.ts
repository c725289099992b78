// pi (badlogic/pi-mono coding agent) session files: a `session` header line, then entries. Version 1
// files are a linear list; versions 2 and 3 link entries by `id`/`parentId` into a tree whose branches
// share their prefix. Each assistant `message` with usage is one request; `model_change`,
// `thinking_level_change`, `compaction` and `branch_summary` entries become its events. pi keeps no
// system prompt or tool schemas, so no request body is rebuilt.

import type { JsonValue, ProviderId, Usage } from '../../../harness/types.ts'
import { type Fields, fieldsOf, isoOf, numberOf, textOf } from './fields.ts'
import { readJsonRecords, recordProblem, SkipTally } from './lines.ts'
import type { ObservedRequest, ReadOptions, TranscriptEvent, TranscriptReader } from './types.ts'

/** The cachelab provider whose cache each wire API pi speaks reaches (pi-ai's `Api` names). */
const PROVIDER_OF_API: Readonly<Record<string, ProviderId>> = {
  'anthropic-messages': 'anthropic',
  'openai-completions': 'openai-chat',
  'openai-responses': 'openai-responses',
  'azure-openai-responses': 'openai-responses',
  'openai-codex-responses': 'openai-responses',
  'google-generative-ai': 'gemini',
  'google-vertex': 'gemini',
  'bedrock-converse-stream': 'bedrock',
}

/** The API of a built-in provider, for a message that names no API. */
const API_OF_PROVIDER: Readonly<Record<string, string>> = {
  anthropic: 'anthropic-messages',
  openai: 'openai-responses',
  deepseek: 'openai-completions',
}

/**
 * pi's built-in providers that are other vendors or gateways on a borrowed wire API: the API's cache
 * rules are not theirs (a router's cache is its upstream's), so cachelab does not model them.
 */
const OTHER_VENDORS = new Set([
  'github-copilot',
  'xai',
  'groq',
  'cerebras',
  'openrouter',
  'vercel-ai-gateway',
  'zai',
  'mistral',
  'minimax',
  'minimax-cn',
  'moonshotai',
  'moonshotai-cn',
  'huggingface',
  'fireworks',
  'opencode',
  'opencode-go',
  'kimi-coding',
  'cloudflare-workers-ai',
  'cloudflare-ai-gateway',
  'xiaomi',
  'xiaomi-token-plan-cn',
  'xiaomi-token-plan-ams',
  'xiaomi-token-plan-sgp',
])

/**
 * The cachelab provider of a pi assistant message (`provider`, `api`), read by the wire API pi spoke: a
 * custom `models.json` provider (a proxy, a local endpoint) is the API it names, as a built-in one is.
 * DeepSeek's Chat Completions is DeepSeek's own cache. Undefined for an API cachelab does not simulate
 * and for pi's built-in vendors and gateways that borrow an API (`OTHER_VENDORS`).
 */
export function piProvider(provider: string | undefined, api: string | undefined): ProviderId | undefined {
  if (provider !== undefined && OTHER_VENDORS.has(provider)) return undefined
  const wire = api ?? (provider === undefined ? undefined : API_OF_PROVIDER[provider])
  const modelled = wire === undefined ? undefined : PROVIDER_OF_API[wire]
  return modelled === 'openai-chat' && provider === 'deepseek' ? 'deepseek' : modelled
}

/**
 * pi usage in cachelab's buckets: pi's `input` already excludes cached tokens, so `input` here is
 * `input + cacheRead + cacheWrite`. pi writes `cacheWrite: 0` for providers that report no writes; only
 * Anthropic's and Bedrock's zero is a count. Undefined when `input` or `output` is missing.
 */
export function piUsage(raw: unknown, provider: ProviderId): Usage | undefined {
  const usage = fieldsOf(raw)
  const uncached = numberOf(usage.input)
  const output = numberOf(usage.output)
  if (uncached === undefined || output === undefined) return undefined
  const cacheRead = numberOf(usage.cacheRead)
  const recordedWrite = numberOf(usage.cacheWrite)
  const cacheWrite =
    provider === 'anthropic' || provider === 'bedrock' || (recordedWrite ?? 0) > 0 ? recordedWrite : undefined
  return {
    input: uncached + (cacheRead ?? 0) + (cacheWrite ?? 0),
    uncached,
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    output,
    raw: raw as JsonValue,
  }
}

/** One conversation of a pi file: the main path, or a branch off an earlier entry. */
interface Branch {
  session: string
  parent: string | undefined
  pending: TranscriptEvent[]
  /** The model and thinking level of the branch's previous request. */
  previous: { model: string; level: string | undefined } | undefined
  turn: number
  step: number
}

/** What a tree entry leaves behind for a later entry that names it as parent. */
interface EntryState {
  branch: Branch
  /** The thinking level in force after the entry. */
  level: string | undefined
  /** The turn and step counts after the entry: a branch off it counts on from them. */
  turn: number
  step: number
}

/** The id of a session file path (`<timestamp>_<uuid>.jsonl`), or its name when it does not end in one. */
function sessionOfPath(path: string): string {
  const match = /_([0-9a-f-]{36})\.jsonl$/i.exec(path)
  return match?.[1] ?? (path.split(/[\\/]/).at(-1) ?? path).replace(/\.jsonl$/, '')
}

/** Why requests were not counted, by reason, with the first line of each. */

/** The fold of one pi file: fed its lines in order, it answers the requests each line completes. */
export class PiLog {
  private header:
    | { id: string; tree: boolean; parent: string | undefined; created: number | undefined }
    | undefined
  /** The linear file's one branch, or the branch of the latest entry. */
  private main: Branch | undefined
  private readonly entries = new Map<string, EntryState>()
  /** The latest entry of each branch: an entry naming any other parent starts a branch. */
  private readonly tips = new Map<Branch, string>()
  private level: string | undefined
  private readonly skips = new SkipTally()

  constructor(
    private readonly file: string,
    private readonly options: ReadOptions,
  ) {}

  /** Take one line's JSON value; returns the requests it completes. */
  accept(line: number, value: unknown): ObservedRequest[] {
    const where = `${this.file}:${line}`
    const entry = fieldsOf(value)
    const type = textOf(entry.type)
    if (type === undefined) return recordProblem(this.options, where, 'not a pi entry (no "type")')
    if (this.header === undefined) {
      if (type === 'session') return this.start(entry)
      recordProblem(this.options, where, 'the file has no pi session header before its first entry')
      this.start({})
    }
    if (type === 'session') return recordProblem(this.options, where, 'a second session header')
    const header = this.header as NonNullable<PiLog['header']>
    const { branch, level } = this.place(entry)
    this.level = level
    // A branched or forked file starts with a copy of its parent's path, written with the copied
    // entries' own times, before the file's creation: that usage is the parent's.
    const time = Date.parse(textOf(entry.timestamp) ?? '')
    const inherited = header.parent !== undefined && header.created !== undefined && time < header.created
    const requests = this.entry(where, type, entry, branch, inherited)
    if (typeof entry.id === 'string')
      this.entries.set(entry.id, { branch, level: this.level, turn: branch.turn, step: branch.step })
    return requests
  }

  /** Report what was left uncounted, once the file is read. */
  finish(): void {
    this.skips.report(this.options)
  }

  private start(entry: Fields): [] {
    const version = numberOf(entry.version) ?? 1
    const parentPath = textOf(entry.parentSession) ?? textOf(entry.branchedFrom)
    const id = textOf(entry.id) ?? sessionOfPath(this.file)
    this.header = {
      id,
      tree: version >= 2,
      parent: parentPath === undefined ? undefined : sessionOfPath(parentPath),
      created:
        textOf(entry.timestamp) === undefined ? undefined : Date.parse(textOf(entry.timestamp) as string),
    }
    this.level = textOf(entry.thinkingLevel)
    return []
  }

  /**
   * The branch an entry belongs to and the thinking level before it. In a tree, an entry continues its
   * parent's branch when the parent is that branch's latest entry; otherwise it starts a branch of its
   * own (a session whose parent is the branch it left).
   */
  private place(entry: Fields): { branch: Branch; level: string | undefined } {
    const header = this.header as NonNullable<PiLog['header']>
    if (this.main === undefined) {
      this.main = this.branch(header.id, header.parent)
    }
    const id = textOf(entry.id)
    if (!header.tree || id === undefined) return { branch: this.main, level: this.level }
    const parentId = textOf(entry.parentId)
    const from = parentId === undefined ? undefined : this.entries.get(parentId)
    let branch: Branch
    let level = from?.level ?? this.level
    if (from !== undefined && this.tips.get(from.branch) === parentId) {
      branch = from.branch
    } else if (from === undefined && this.tips.size === 0) {
      branch = this.main
      level = this.level
    } else {
      branch = this.branch(`${header.id}.branch-${id}`, (from?.branch ?? this.main).session)
      branch.turn = from?.turn ?? 0
      branch.step = from?.step ?? 0
    }
    this.tips.set(branch, id)
    return { branch, level }
  }

  private branch(session: string, parent: string | undefined): Branch {
    return { session, parent, pending: [], previous: undefined, turn: 0, step: 0 }
  }

  private entry(
    where: string,
    type: string,
    entry: Fields,
    branch: Branch,
    inherited: boolean,
  ): ObservedRequest[] {
    switch (type) {
      case 'thinking_level_change':
        this.level = textOf(entry.thinkingLevel) ?? this.level
        return []
      case 'compaction': {
        const tokens = numberOf(entry.tokensBefore)
        if (!inherited)
          branch.pending.push({
            kind: 'compaction',
            detail: tokens === undefined ? 'compaction' : `compaction of ${tokens} tokens`,
          })
        return []
      }
      case 'branch_summary':
        if (!inherited) branch.pending.push({ kind: 'compaction', detail: 'branch summary' })
        return []
      case 'message':
        return this.message(where, entry, branch, inherited)
      default:
        // `model_change` is read from the requests' own models (a change the next request does not make
        // leaves the prompt as it was); `custom`, `label`, `session_info` … carry no request.
        return []
    }
  }

  private message(where: string, entry: Fields, branch: Branch, inherited: boolean): ObservedRequest[] {
    const message = fieldsOf(entry.message)
    if (message.role === 'user') {
      branch.turn += 1
      branch.step = 0
      return []
    }
    if (message.role !== 'assistant') return []
    branch.step += 1
    if (inherited) return this.skips.add(where, "copied from the parent session's file: not counted again")
    if (message.usage === undefined) return this.skips.add(where, 'with no usage recorded: not counted')
    const provider = piProvider(textOf(message.provider), textOf(message.api))
    if (provider === undefined)
      return this.skips.add(
        where,
        `to provider ${textOf(message.provider) ?? 'unknown'} (api ${textOf(message.api) ?? 'unknown'}) skipped: cachelab does not model its cache`,
      )
    const usage = piUsage(message.usage, provider)
    if (usage === undefined)
      return recordProblem(this.options, where, 'assistant usage without input and output')
    // A request stopped before the provider answered records all zeros: nothing reached a cache.
    if (usage.input === 0 && usage.output === 0)
      return this.skips.add(where, 'with all-zero usage (aborted or failed before an answer): not counted')
    const model = textOf(message.model) ?? 'unknown'
    const events = branch.pending
    branch.pending = []
    const previous = branch.previous
    if (previous !== undefined && previous.model !== model)
      events.push({ kind: 'model-switch', from: previous.model, to: model })
    if (previous !== undefined && previous.level !== this.level)
      events.push({
        kind: 'config-change',
        detail: `thinking level ${previous.level ?? 'unset'} → ${this.level ?? 'unset'}`,
      })
    branch.previous = { model, level: this.level }
    const header = this.header as NonNullable<PiLog['header']>
    return [
      {
        format: 'pi',
        source: where,
        session: branch.session,
        ...(branch.parent !== undefined ? { parent: branch.parent } : {}),
        provider,
        model,
        // The message's own time is when its request began; the entry's, when the answer was saved.
        time:
          isoOf(numberOf(message.timestamp)) ??
          isoOf(Date.parse(textOf(entry.timestamp) ?? '')) ??
          isoOf(header.created) ??
          new Date(0).toISOString(),
        usage,
        events,
        ...(branch.turn > 0 ? { turn: branch.turn } : {}),
        step: branch.step,
      },
    ]
  }
}

/** Read a pi session file (version 1 or 3), streamed. */
export const readPi: TranscriptReader = async function* readPi(file, options) {
  const log = new PiLog(file, options)
  for await (const { line, value } of readJsonRecords(file, options)) yield* log.accept(line, value)
  log.finish()
}
