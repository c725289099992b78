// Gemini CLI session files (`~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`; a subagent's in
// `chats/<parent session>/<session>.jsonl`): a header line, message records, `$set` metadata updates and
// `$rewindTo` marks. Each `gemini` record with `tokens` is one request; a record written again under the
// same id (tokens, then its tool calls) is the same request. Gemini CLI keeps no system prompt, tool
// schemas or side requests (router, next-speaker check, compression summarizer) in the file: no request
// body is rebuilt and those requests are not there. Older versions kept a session as one JSON object
// (`session-*.json`, rewritten whole on every message), read whole here as they read it. See
// notes/2026-12-02-import-gemini-cli.md.

import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import { CachelabError } from '../../../harness/errors.ts'
import { isRecord } from '../../../harness/json-fields.ts'
import type { JsonValue, Usage } from '../../../harness/types.ts'
import { parseGeminiUsage } from '../../../providers/gemini.ts'
import { canonicalJson, contentHash } from '../../../providers/wire/digest.ts'
import { type Fields, fieldsOf, listOf, numberOf, textOf } from './fields.ts'
import { lineProblem, readJsonRecords, recordProblem, SkipTally } from './lines.ts'
import type { ObservedRequest, ReadOptions, TranscriptEvent, TranscriptReader } from './types.ts'

/**
 * Gemini CLI's `tokens` in cachelab's buckets, as the Gemini adapter reads the `usageMetadata` they were
 * copied from: `input` (Gemini's prompt count) includes `cached`, so uncached is `input − cached`; output
 * is `output + thoughts`; implicit caching reports no writes. `tool` (tool-use prompt tokens) is kept in
 * `raw` only, as the adapter keeps it. Undefined when `input` or `output` is missing.
 */
export function geminiCliUsage(raw: unknown): Usage | undefined {
  const tokens = fieldsOf(raw)
  const input = numberOf(tokens.input)
  const output = numberOf(tokens.output)
  if (input === undefined || output === undefined) return undefined
  const cached = numberOf(tokens.cached) ?? 0
  // Gemini CLI writes 0 for a count the API left out (proto3 JSON drops zeros): no thoughts is none reported.
  const thoughts = numberOf(tokens.thoughts) ?? 0
  const usage = parseGeminiUsage({
    promptTokenCount: input,
    candidatesTokenCount: output,
    ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
  })
  return { ...usage, raw: raw as JsonValue }
}

/** Whether a user record is a typed prompt: any part that is not a tool's result. */
function isPrompt(content: unknown): boolean {
  if (typeof content === 'string') return content.trim() !== ''
  return listOf(content).some((part) => {
    const fields = fieldsOf(part)
    return (
      fields.functionResponse === undefined && (typeof fields.text === 'string' || 'inlineData' in fields)
    )
  })
}

/**
 * Where the first user message of `messages` that `contents` held otherwise (by id) sits on the wire, as a capture
 * names it: `contents[i].j`, Gemini joining a run of messages of one role into one content whose parts are
 * theirs in order. Undefined when every message it knew is as it was.
 */
export function rebuiltNode(
  messages: readonly unknown[],
  contents: ReadonlyMap<string, string>,
): string | undefined {
  let content = -1
  let part = 0
  let role: string | undefined
  for (const message of messages) {
    const fields = fieldsOf(message)
    const wireRole = fields.type === 'gemini' ? 'model' : 'user'
    if (wireRole !== role) {
      content += 1
      part = 0
      role = wireRole
    }
    // A model message is kept in the list in another form than its record (its thoughts as parts): only
    // a user message can be compared with what it was.
    const id = wireRole === 'user' ? textOf(fields.id) : undefined
    const before = id === undefined ? undefined : contents.get(id)
    if (before !== undefined && before !== contentHash(canonicalJson(fields.content ?? null)))
      return `contents[${content}].${part}`
    part += typeof fields.content === 'string' ? 1 : Math.max(1, listOf(fields.content).length)
  }
  return undefined
}

/** The fold of one Gemini CLI file: fed its records in order, it answers the requests each completes. */
export class GeminiCliLog {
  private header: { session: string; parent?: string; subagent: boolean; started: string } | undefined
  /** Model records already counted, by id: a record written again is the same request. */
  private readonly counted = new Set<string>()
  /** Model records seen without tokens yet, by id, with where they were first seen. */
  private readonly waiting = new Map<string, string>()
  /** Every message id the file has shown, in records or in `$set` message lists. */
  private readonly known = new Set<string>()
  /** The hash of what each message id held when last shown: a message list that holds it otherwise rebuilt it. */
  private readonly contents = new Map<string, string>()
  private pending: TranscriptEvent[] = []
  private previousModel: string | undefined
  /** A chat was (re)started on the file since its last message list: a resume, unless it was compressed. */
  private restarted = false
  private turn = 0
  private step = 0
  /** The latest message record was a prompt: a prompt after it joins its turn. */
  private inPrompt = false
  private readonly skips = new SkipTally()

  constructor(
    private readonly file: string,
    private readonly options: ReadOptions,
  ) {}

  /** Take one record's JSON value; returns the requests it completes. */
  accept(line: number, value: unknown): ObservedRequest[] {
    const where = `${this.file}:${line}`
    const record = fieldsOf(value)
    if ('$set' in record) return this.set(fieldsOf(record.$set))
    if ('$rewindTo' in record) return []
    const type = textOf(record.type)
    if (type === undefined) {
      if (typeof record.sessionId === 'string') return this.start(record)
      return recordProblem(
        this.options,
        where,
        'not a Gemini CLI record (no "type", "$set" or session header)',
      )
    }
    if (this.header === undefined) {
      recordProblem(this.options, where, 'the file has no Gemini CLI session header before its first message')
      this.start({})
    }
    const id = textOf(record.id)
    if (id !== undefined) {
      this.known.add(id)
      this.contents.set(id, contentHash(canonicalJson(record.content ?? null)))
    }
    switch (type) {
      case 'user':
        if (isPrompt(record.content)) {
          if (!this.inPrompt) {
            this.turn += 1
            this.step = 0
          }
          this.inPrompt = true
        }
        return []
      case 'gemini':
        return this.model(where, id, record)
      default:
        // `info`, `warning`, `error` records are the CLI's own messages to the user: no request.
        return []
    }
  }

  /** Report what was left uncounted, once the file is read. */
  finish(): void {
    for (const where of this.waiting.values())
      this.skips.add(where, 'with no usage recorded (synthetic or interrupted): not counted')
    this.skips.report(this.options, 'model response')
  }

  private start(record: Fields): [] {
    if (this.header !== undefined) {
      // Another process opened the file: the chat goes on in it.
      this.restarted = true
      return []
    }
    const session = textOf(record.sessionId) ?? basename(this.file).replace(/\.jsonl?$/, '')
    const folder = basename(dirname(this.file))
    const subagent = record.kind === 'subagent' && folder !== 'chats'
    this.header = {
      // Named as a capture names a subagent: its parent session, then its own id.
      session: subagent ? `${folder}.subagent-${session}` : session,
      ...(subagent ? { parent: folder } : {}),
      subagent,
      started: textOf(record.startTime) ?? new Date(0).toISOString(),
    }
    return []
  }

  /**
   * A metadata update. A `sessionId` is set when a chat starts on the file (a resume, or the new chat of a
   * compression); the message list that follows tells them apart: a compressed history drops messages
   * already sent and brings new ones (the summary).
   */
  private set(update: Fields): [] {
    if ('sessionId' in update) this.restarted = true
    if (!Array.isArray(update.messages)) return []
    const ids = update.messages
      .map((message) => textOf(fieldsOf(message).id))
      .filter((id) => id !== undefined)
    const listed = new Set(ids)
    const fresh = ids.some((id) => !this.known.has(id))
    const dropped = [...this.counted].some((id) => !listed.has(id))
    if (fresh && dropped) this.event({ kind: 'compaction', detail: 'chat compression' })
    else if (this.restarted && this.counted.size > 0) {
      this.event({ kind: 'resume', detail: 'chat resumed' })
      const edited = rebuiltNode(update.messages, this.contents)
      if (edited !== undefined)
        this.event({ kind: 'message-edit', node: edited, detail: 'rebuilt on resume' })
    }
    this.restarted = false
    for (const message of update.messages) {
      const fields = fieldsOf(message)
      const id = textOf(fields.id)
      if (id === undefined) continue
      this.known.add(id)
      this.contents.set(id, contentHash(canonicalJson(fields.content ?? null)))
    }
    return []
  }

  private event(event: TranscriptEvent): void {
    if (!this.pending.some((each) => each.kind === event.kind)) this.pending.push(event)
  }

  private model(where: string, id: string | undefined, record: Fields): ObservedRequest[] {
    this.inPrompt = false
    if (id !== undefined && this.counted.has(id)) return []
    if (record.tokens === undefined || record.tokens === null) {
      if (id !== undefined && !this.waiting.has(id)) this.waiting.set(id, where)
      else if (id === undefined)
        this.skips.add(where, 'with no usage recorded (synthetic or interrupted): not counted')
      return []
    }
    const usage = geminiCliUsage(record.tokens)
    if (usage === undefined)
      return recordProblem(this.options, where, 'model tokens without input and output')
    const first = id === undefined ? undefined : this.waiting.get(id)
    if (id !== undefined) {
      this.waiting.delete(id)
      this.counted.add(id)
    }
    const header = this.header as NonNullable<GeminiCliLog['header']>
    const model = textOf(record.model) ?? 'unknown'
    const events = this.pending
    this.pending = []
    if (this.previousModel !== undefined && this.previousModel !== model)
      events.push({ kind: 'model-switch', from: this.previousModel, to: model })
    this.previousModel = model
    this.step += 1
    return [
      {
        format: 'gemini-cli',
        source: first ?? where,
        session: header.session,
        ...(header.parent !== undefined ? { parent: header.parent, kind: 'subagent' as const } : {}),
        agent: 'gemini-cli',
        provider: 'gemini',
        model,
        time: textOf(record.timestamp) ?? header.started,
        usage,
        events,
        ...(this.turn > 0 ? { turn: this.turn } : {}),
        step: this.step,
      },
    ]
  }
}

/**
 * Read an older Gemini CLI's `session-*.json`: one object `{sessionId, projectHash, startTime, messages}`,
 * each message named by the line its id is on. A later Gemini CLI that resumes it converts it to a
 * `.jsonl` beside it holding the same messages: then it is read there, not twice.
 */
async function* readLegacy(file: string, options: ReadOptions): AsyncIterable<ObservedRequest> {
  if (existsSync(`${file}l`)) {
    options.onNote?.({
      where: file,
      message: `converted to ${basename(file)}l by a later Gemini CLI: its requests are read there`,
    })
    return
  }
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new CachelabError('input', `${file}: cannot read (${error.code ?? error.message})`)
  })
  let session: unknown
  try {
    session = JSON.parse(text)
  } catch (error) {
    const lines = text.split('\n').length
    lineProblem(
      file,
      lines,
      `not a whole JSON object (${error instanceof Error ? error.message : String(error)}): torn or corrupt`,
      options,
    )
    return
  }
  if (!isRecord(session) || !Array.isArray(session.messages)) {
    lineProblem(file, 1, 'not a Gemini CLI session (no "messages")', options)
    return
  }
  const log = new GeminiCliLog(file, options)
  const { messages, ...header } = session
  log.accept(1, header)
  let cursor = 0
  let line = 1
  for (const message of messages) {
    const id = textOf(fieldsOf(message).id)
    const at = id === undefined ? -1 : text.indexOf(`"${id}"`, cursor)
    if (at >= 0) {
      for (let index = cursor; index < at; index += 1) if (text.charCodeAt(index) === 10) line += 1
      cursor = at
    }
    yield* log.accept(line, message)
  }
  log.finish()
}

/** Read a Gemini CLI session file: a `.jsonl` streamed, an older version's `.json` whole. */
export const readGeminiCli: TranscriptReader = async function* readGeminiCli(file, options) {
  if (file.endsWith('.json')) {
    yield* readLegacy(file, options)
    return
  }
  const log = new GeminiCliLog(file, options)
  for await (const { line, value } of readJsonRecords(file, options)) yield* log.accept(line, value)
  log.finish()
}
