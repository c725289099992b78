// DSH (deepseek-harness) session logs, `.jsonl` or `.jsonl.zstd`: a `session` header line, then one
// event per line (`{type, seq, time, data}`, packed chunk rows `{type, seq0, time0, data}`). Each
// `assistant/message` with usage is one request; the header events, route context and compactions
// before it are its events; and since the log keeps the header and every message, each request's body
// is rebuilt the way DSH's DeepSeek adapter sent it.

import { CachelabError } from '../../../harness/errors.ts'
import type { JsonValue, ProviderId, Usage } from '../../../harness/types.ts'
import { SeriesStartRederivation } from './dsh-policy.ts'
import { answerOf, type DshHeader, DshRequestBuilder, headerChanges, readHeader } from './dsh-request.ts'
import { type Fields, fieldsOf, isoOf, listOf, numberOf, textOf } from './fields.ts'
import { readJsonRecords } from './lines.ts'
import type {
  ObservedRequest,
  PolicyRederivation,
  ReadOptions,
  TranscriptEvent,
  TranscriptReader,
} from './types.ts'

/**
 * The DSH session format versions this reader knows (deepseek-harness `SESSION_FORMAT_VERSION`):
 * generation B's 0 (the prompt in the request header) and C's 3 (the prompt as `system/message` nodes).
 */
export const DSH_FORMAT_VERSIONS: readonly number[] = [0, 3]

/** Packed chunk rows: one line stands for one event per member, numbered from `seq0`. */
const PACKED_ROWS: Readonly<Record<string, 'texts' | 'args'>> = {
  'text-chunks': 'texts',
  'reasoning-chunks': 'texts',
  'tool-call-chunks': 'args',
}

/**
 * The cachelab provider of a DSH provider route. DSH names routes itself (`deepseek-official`) or after
 * the pi-ai provider behind them (`anthropic`, `openai`, `deepseek`); anything else is taken for
 * DeepSeek, DSH's own adapter.
 */
export function dshProvider(route: string | undefined): ProviderId {
  const name = (route ?? '').toLowerCase()
  if (name.includes('anthropic') || name.includes('claude')) return 'anthropic'
  // pi-ai's OpenAI route speaks the Responses API.
  if (name === 'openai') return 'openai-responses'
  return 'deepseek'
}

/**
 * DSH usage in cachelab's buckets. DSH's counts are already disjoint (its DeepSeek adapter subtracts the
 * cache hits from `prompt_tokens`): `inputTokens` uncached, `cacheReadTokens`, `cacheWriteTokens`;
 * `outputTokens` includes `reasoningTokens`. A count the log leaves out stays unreported. Undefined when
 * `inputTokens` or `outputTokens` is missing.
 */
export function dshUsage(raw: unknown): Usage | undefined {
  const usage = fieldsOf(raw)
  const uncached = numberOf(usage.inputTokens)
  const output = numberOf(usage.outputTokens)
  if (uncached === undefined || output === undefined) return undefined
  const cacheRead = numberOf(usage.cacheReadTokens)
  const cacheWrite = numberOf(usage.cacheWriteTokens)
  const reasoning = numberOf(usage.reasoningTokens)
  return {
    input: uncached + (cacheRead ?? 0) + (cacheWrite ?? 0),
    uncached,
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    output,
    ...(reasoning !== undefined ? { reasoning } : {}),
    raw: raw as JsonValue,
  }
}

/** A DSH session header line's fields this reader uses. */
interface SessionLine {
  id: string
  parent: string | undefined
  /** Events before this seq came from a parent's log (a fork seed): folded, never counted. */
  seedLength: number
  createdAt: number | undefined
}

/** The session id of a file whose header has none (or a snapshot placeholder): its directory or file name. */
function sessionFromPath(file: string): string {
  const parts = file.split(/[\\/]/)
  const base = (parts.at(-1) ?? file).replace(/\.jsonl(\.zstd|\.zst)?$/, '')
  return base === 'session' && parts.length > 1 ? (parts.at(-2) ?? base) : base
}

/**
 * The fold of one DSH log: fed its lines in order, it answers the requests each line completes. Pure but
 * for `options.onProblem`/`onNote`, which it calls for lines it cannot use.
 */
export class DshLog {
  private session: SessionLine | undefined
  private nextSeq = 0
  private lastTime: number | undefined
  private header: DshHeader | undefined
  private context: { provider: string | undefined; model: string | undefined } = {
    provider: undefined,
    model: undefined,
  }
  private readonly builder = new DshRequestBuilder()
  /** The same surface under `options.seriesStart`, when asked. */
  private readonly rederivation: SeriesStartRederivation | undefined
  /** Why bodies can no longer be rebuilt (a surface operation the fold could not apply), once it happens. */
  private broken: string | undefined
  private pending: TranscriptEvent[] = []
  private previousModel: string | undefined
  /** When the current attempt's response began streaming: the closest the log has to its request's start. */
  private attemptStart: number | undefined
  private seedEnded = false

  constructor(
    private readonly file: string,
    private readonly options: ReadOptions,
  ) {
    this.rederivation =
      options.seriesStart === undefined
        ? undefined
        : new SeriesStartRederivation(options.seriesStart, () => this.builder.systemNodes())
  }

  /** Take one line's JSON value; returns the requests it completes. */
  accept(line: number, value: unknown): ObservedRequest[] {
    const where = `${this.file}:${line}`
    const record = fieldsOf(value)
    const type = textOf(record.type)
    if (type === undefined) return this.problem(where, 'not a DSH event (no "type")')
    if (this.session === undefined) {
      if (type === 'session') return this.start(where, record)
      this.problem(where, 'the log has no DSH session header before its first event')
      this.session = {
        id: sessionFromPath(this.file),
        parent: undefined,
        seedLength: 0,
        createdAt: undefined,
      }
    }
    if (type === 'session') return this.problem(where, 'a second session header')
    const members = PACKED_ROWS[type]
    const seq = numberOf(record.seq) ?? numberOf(record.seq0) ?? this.nextSeq
    const count = members === undefined ? 1 : Math.max(listOf(fieldsOf(record.data)[members]).length, 1)
    this.nextSeq = seq + count
    const time = numberOf(record.time) ?? numberOf(record.time0)
    if (time !== undefined) this.lastTime = time
    const inherited = seq < this.session.seedLength
    if (!inherited && !this.seedEnded) {
      // The parent's history before the seed's end tells nothing about this session's first request.
      this.seedEnded = true
      this.pending = []
    }
    if (members !== undefined) {
      this.attemptStart ??= time
      return []
    }
    return this.event(where, type, seq, time, fieldsOf(record.data), record, inherited)
  }

  private start(where: string, record: Fields): ObservedRequest[] {
    const version = numberOf(record.version)
    if (version === undefined || !DSH_FORMAT_VERSIONS.includes(version))
      this.problem(
        where,
        `DSH session format version ${String(record.version)} (cachelab reads ${DSH_FORMAT_VERSIONS.join(', ')})`,
      )
    const id = textOf(record.id)
    this.session = {
      id: id === undefined || id === '' || id.startsWith('{{') ? sessionFromPath(this.file) : id,
      parent: textOf(record.parentSession),
      seedLength: numberOf(record.seedLength) ?? 0,
      createdAt: numberOf(record.createdAt),
    }
    return []
  }

  private event(
    where: string,
    type: string,
    seq: number,
    time: number | undefined,
    data: Fields,
    record: Fields,
    inherited: boolean,
  ): ObservedRequest[] {
    switch (type) {
      case 'request/header': {
        const header = readHeader(data)
        this.takeHeader(header, data.reason, inherited)
        this.rederivation?.header(header, data)
        return []
      }
      case 'request/context':
        this.context = { provider: textOf(data.provider), model: textOf(data.model) }
        this.rederivation?.context(data)
        return []
      case 'step/start':
      case 'assistant/attempt':
        // A step's system commits and a failed attempt's are decided before what follows them.
        this.rederivation?.boundary()
        return []
      case 'user/message':
        this.place(where, seq, record, data)
        return []
      case 'system/message':
        // Generation C: the prompt is a surface node, appended or replaced like a message.
        this.place(where, seq, record, data.message)
        return []
      case 'tool/result':
        this.place(where, seq, record, data.message)
        return []
      case 'assistant/chunk': {
        this.attemptStart ??= time
        // A stream that finished failed ends its attempt: a retry's request starts after it.
        const chunk = fieldsOf(data.chunk)
        const finish = textOf(fieldsOf(chunk.reason).kind)
        if (chunk.type === 'finish' && (finish === 'error' || finish === 'aborted'))
          this.attemptStart = undefined
        return []
      }
      case 'assistant/message':
        return this.assistant(where, seq, time, record, data, inherited)
      case 'compaction/summary':
        return this.compaction(where, time, data, 'summary', inherited)
      case 'compaction/prune':
        return this.compaction(where, time, data, 'prune', inherited)
      default:
        // DSH's event map is open to plugins: every other event is no request and no cache event.
        return []
    }
  }

  private takeHeader(header: DshHeader, reason: unknown, inherited: boolean): void {
    if (!inherited) {
      if (reason === 'resume')
        this.pending.push({ kind: 'resume', detail: 'a new loop instance resumed the log' })
      if (this.header !== undefined) this.pending.push(...headerChanges(this.header, header))
    }
    this.header = header
    this.builder.setHeader(header)
  }

  /** Apply a surface event's operation (`append`, or `{op: 'replace', start, end}`) to the surface. */
  private place(where: string, seq: number, record: Fields, message: unknown): void {
    const operation = record.surfaceOp
    const system = record.type === 'system/message'
    // An event without an operation is taken as appended (DSH itself requires one).
    if (operation === undefined || operation === 'append') {
      this.rederivation?.append(seq, message, system)
      this.builder.append(seq, message)
      return
    }
    const replace = fieldsOf(operation)
    // Generation B names the range `start`/`end`, C `startSeq`/`endSeq`.
    const start = numberOf(replace.startSeq) ?? numberOf(replace.start)
    const end = numberOf(replace.endSeq) ?? numberOf(replace.end)
    const known = replace.op === 'replace' && start !== undefined && end !== undefined
    // The re-derivation reads the recorded system nodes before the replacement lands.
    if (known) this.rederivation?.replace(seq, start, end, message, system)
    const failure = known ? this.builder.replace(seq, start, end, message) : 'an unknown surface operation'
    if (failure !== undefined && this.broken === undefined) {
      this.broken = `${where}: ${failure}`
      this.options.onNote?.({ where, message: `${failure}: later requests are not rebuilt` })
    }
  }

  private assistant(
    where: string,
    seq: number,
    time: number | undefined,
    record: Fields,
    data: Fields,
    inherited: boolean,
  ): ObservedRequest[] {
    const message = fieldsOf(data.message)
    const start = this.attemptStart ?? time
    this.attemptStart = undefined
    // The request was built from the surface before its own answer joins it.
    const built = this.broken === undefined ? this.builder.build() : undefined
    const rederived = this.rederivation?.build(built?.body ?? {})
    // An empty assistant/message only hosts usage (a max-tokens step): it places nothing.
    if (listOf(message.content).length > 0) this.place(where, seq, record, message)
    if (inherited || data.usage === undefined) return []
    const usage = dshUsage(data.usage)
    if (usage === undefined)
      return this.problem(where, 'assistant/message usage without inputTokens and outputTokens')
    const source = fieldsOf(message.source)
    const route = textOf(source.provider) ?? this.context.provider ?? textOf(this.header?.config.provider)
    const model = textOf(source.model) ?? this.context.model ?? textOf(this.header?.config.model) ?? 'unknown'
    const provider = dshProvider(route)
    const events = this.takeEvents(model)
    const answer = answerOf(message)
    const turn = numberOf(data.turn)
    const step = numberOf(data.step)
    const requestId = textOf(message.id)
    const request: ObservedRequest = {
      format: 'dsh',
      source: where,
      ...this.identity(),
      provider,
      model,
      time: this.isoTime(start),
      usage,
      events,
      ...(turn !== undefined ? { turn } : {}),
      ...(step !== undefined ? { step } : {}),
      ...(requestId !== undefined ? { requestId } : {}),
      // Only DSH's own DeepSeek adapter's serialization is followed; other routes keep their usage alone.
      ...(built !== undefined && provider === 'deepseek'
        ? { request: { api: 'deepseek-chat' as const, body: built.body, estimated: built.estimated } }
        : {}),
      answer: {
        message: { role: 'assistant', content: answer.content },
        ...(answer.reasoning !== undefined ? { reasoning: answer.reasoning } : {}),
      },
      ...(rederived !== undefined ? { rederived: this.rederivedOf(rederived, provider, route) } : {}),
    }
    return [request]
  }

  /**
   * A compaction: an event for the session's next request, and, when the summarizer call recorded its
   * usage, that call as a request of its own session (`<session>.compaction`): its prompt is the
   * summarizer's, not the conversation's, so it is no step of the conversation's prefix.
   */
  private compaction(
    where: string,
    time: number | undefined,
    data: Fields,
    kind: 'summary' | 'prune',
    inherited: boolean,
  ): ObservedRequest[] {
    if (inherited) return []
    const shadowed = listOf(data.shadowedSeqs).length
    const tokens = numberOf(data.shadowedTokenCount)
    this.pending.push({
      kind: 'compaction',
      cause: 'compaction-summary',
      detail: `${kind} of ${shadowed} surface node${shadowed === 1 ? '' : 's'}${tokens === undefined ? '' : ` (about ${tokens} tokens)`}`,
    })
    if (kind === 'prune' || data.usage === undefined) return []
    const usage = dshUsage(data.usage)
    if (usage === undefined)
      return this.problem(where, 'compaction/summary usage without inputTokens and outputTokens')
    const identity = this.identity()
    return [
      {
        format: 'dsh',
        source: where,
        session: `${identity.session}.compaction`,
        parent: identity.session,
        provider: dshProvider(textOf(data.provider) ?? this.context.provider),
        model: textOf(data.model) ?? this.context.model ?? 'unknown',
        time: this.isoTime(time),
        usage,
        events: [],
        ...(this.rederivation !== undefined
          ? {
              rederived: { kind: 'not-applicable', reason: 'a summarizer call: the log holds no body of it' },
            }
          : {}),
      },
    ]
  }

  /** A re-derivation as far as the recorded body allows it: none without one, none off DSH's DeepSeek adapter. */
  private rederivedOf(
    rederived: PolicyRederivation,
    provider: ProviderId,
    route: string | undefined,
  ): PolicyRederivation {
    if (provider !== 'deepseek')
      return {
        kind: 'not-applicable',
        reason: `route ${route ?? '?'} is not DSH's DeepSeek adapter: its body is not rebuilt`,
      }
    if (this.broken !== undefined)
      return { kind: 'not-applicable', reason: `the recorded body is not rebuilt after ${this.broken}` }
    return rederived
  }

  /** The events since the previous request, with a model switch when the model differs from its model. */
  private takeEvents(model: string): TranscriptEvent[] {
    const events = this.pending
    this.pending = []
    if (this.previousModel !== undefined && this.previousModel !== model)
      events.push({ kind: 'model-switch', from: this.previousModel, to: model })
    this.previousModel = model
    return events
  }

  private identity(): { session: string; parent?: string } {
    const session = this.session as SessionLine
    return { session: session.id, ...(session.parent !== undefined ? { parent: session.parent } : {}) }
  }

  /** A time as ISO 8601: the event's, else the latest the log showed, else the session's creation. */
  private isoTime(time: number | undefined): string {
    return isoOf(time) ?? isoOf(this.lastTime) ?? isoOf(this.session?.createdAt) ?? new Date(0).toISOString()
  }

  /** A line this reader cannot use: an error naming it, or (lenient) a reported skip. */
  private problem(where: string, message: string): [] {
    if (!this.options.lenient) throw new CachelabError('input', `${where}: ${message}`)
    this.options.onProblem({ where, message })
    return []
  }
}

/** Read a DSH session log (`.jsonl` or `.jsonl.zstd`), streamed. */
export const readDsh: TranscriptReader = async function* readDsh(file, options) {
  const log = new DshLog(file, options)
  for await (const { line, value } of readJsonRecords(file, options)) yield* log.accept(line, value)
}
