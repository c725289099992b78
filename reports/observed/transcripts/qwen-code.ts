// qwen-code session files (`~/.qwen/projects/<project>/chats/<sessionId>.jsonl`, or under `$QWEN_HOME`):
// Claude-Code-shaped records (`uuid`, `parentUuid`, `sessionId`, `type`, `provenance`) holding Gemini-shaped
// content. qwen-code writes every API response it gets as a `ui_telemetry` record (`qwen-code.api_response`:
// response id, model, auth type, token counts, and the subagent that sent it, if one did), so those are the
// requests, its subagents' included; an assistant record's `usageMetadata` counts where no such record came
// before it (a file without UI telemetry). See notes/2026-12-02-import-qwen-code.md.

import type { ProviderId, Usage } from '../../../harness/types.ts'
import { type Fields, fieldsOf, numberOf, textOf } from './fields.ts'
import { type JsonRecord, lineProblem, readJsonRecords, SkipTally } from './lines.ts'
import type { ObservedRequest, ReadOptions, TranscriptEvent, TranscriptReader } from './types.ts'

/** The cachelab provider of each qwen-code auth type it can tell (`auth_type`); the others are skipped. */
const PROVIDER_OF_AUTH: Readonly<Record<string, ProviderId>> = {
  // `openai`: any OpenAI-compatible Chat Completions endpoint (the bench's `serve`).
  openai: 'openai-chat',
}

/** qwen-code's own subagents that are side requests, by name, with the purpose a capture gives them. */
const SIDE_SUBAGENTS: Readonly<Record<string, string>> = { 'managed-auto-memory-extractor': 'memory' }

/** User records that are no typed prompt: notifications, cron prompts, a message sent mid-turn. */
const NOT_PROMPTS = new Set(['notification', 'cron', 'mid_turn_user_message', 'goal_runtime'])

/** A response's token counts as qwen-code records them, each where recorded. */
export interface TokenCounts {
  prompt: number | undefined
  cached: number | undefined
  output: number | undefined
  thoughts: number | undefined
}

/**
 * qwen-code's token counts in cachelab's buckets. Its prompt count includes the cached tokens; on the
 * OpenAI wire its candidates count is `completion_tokens` (reasoning included) and its thoughts count the
 * reasoning part of it. Chat Completions reports no writes: left undefined.
 */
export function qwenUsage(counts: TokenCounts, raw: Fields): Usage | undefined {
  if (counts.prompt === undefined || counts.output === undefined) return undefined
  const cacheRead = counts.cached ?? 0
  return {
    input: counts.prompt,
    uncached: counts.prompt - cacheRead,
    cacheRead,
    output: counts.output,
    ...(counts.thoughts !== undefined && counts.thoughts > 0 ? { reasoning: counts.thoughts } : {}),
    raw: raw as Usage['raw'],
  }
}

/** A response as recorded: by telemetry or by an assistant record. */
interface Response {
  model: string | undefined
  counts: TokenCounts
  /** The record's own counts, kept beside the buckets. */
  raw: Fields
  time: string | undefined
}

/** One conversation of the file: the main one, or a subagent's. */
interface Conversation {
  session: string
  kind?: 'subagent' | 'side'
  model?: string
  turn: number
  step: number
  events: TranscriptEvent[]
}

/** The fold of one qwen-code file: fed its records in order, it answers the requests each completes. */
export class QwenCodeReading {
  private readonly conversations = new Map<string, Conversation>()
  /** The main conversation's latest response came as telemetry: its assistant record repeats it. */
  private covered = false
  /** The auth type of the latest response the telemetry named. */
  private auth: string | undefined
  private readonly skips = new SkipTally()

  constructor(
    private readonly file: string,
    private readonly options: ReadOptions,
  ) {}

  accept(record: JsonRecord): ObservedRequest[] {
    const value = record.value
    const session = textOf(value.sessionId)
    if (session === undefined) return []
    const main = this.conversation(session)
    switch (value.type) {
      case 'user':
        if (!NOT_PROMPTS.has(textOf(value.subtype) ?? '')) {
          main.turn += 1
          main.step = 0
        }
        return []
      case 'system':
        return this.system(record, session, main)
      case 'assistant':
        return this.assistant(record, main)
      default:
        return []
    }
  }

  /** Report what was left uncounted, once the file is read. */
  finish(): void {
    this.skips.report(this.options)
  }

  private conversation(session: string, subagent?: { id: string; name: string | undefined }): Conversation {
    const purpose = subagent?.name === undefined ? undefined : SIDE_SUBAGENTS[subagent.name]
    // Named as a capture names the same conversations: the session, then its side or subagent part.
    const name =
      subagent === undefined
        ? session
        : purpose !== undefined
          ? `${session}.side-${purpose}-${subagent.id.split('-').at(-1) ?? subagent.id}`
          : `${session}.subagent-${subagent.id}`
    let conversation = this.conversations.get(name)
    if (conversation === undefined) {
      conversation = {
        session: name,
        ...(subagent !== undefined
          ? { kind: purpose !== undefined ? ('side' as const) : ('subagent' as const) }
          : {}),
        turn: subagent === undefined ? 0 : 1,
        step: 0,
        events: [],
      }
      this.conversations.set(name, conversation)
    }
    return conversation
  }

  private system(record: JsonRecord, session: string, main: Conversation): ObservedRequest[] {
    const value = record.value
    if (value.subtype === 'chat_compression') {
      const before = numberOf(fieldsOf(fieldsOf(value.systemPayload).info).originalTokenCount)
      main.events.push({
        kind: 'compaction',
        ...(before !== undefined ? { detail: `compression of ${before} tokens` } : {}),
      })
      return []
    }
    if (value.subtype !== 'ui_telemetry') return []
    const event = fieldsOf(fieldsOf(value.systemPayload).uiEvent)
    if (event['event.name'] !== 'qwen-code.api_response') return []
    const subagentId = textOf(event.subagent_id)
    const conversation =
      subagentId === undefined
        ? main
        : this.conversation(session, { id: subagentId, name: textOf(event.subagent_name) })
    if (conversation === main) this.covered = true
    this.auth = textOf(event.auth_type) ?? this.auth
    const counts = {
      prompt: numberOf(event.input_token_count),
      cached: numberOf(event.cached_content_token_count),
      output: numberOf(event.output_token_count),
      thoughts: numberOf(event.thoughts_token_count),
    }
    const time = textOf(event['event.timestamp']) ?? textOf(value.timestamp)
    return this.request(
      record,
      conversation,
      { model: textOf(event.model), counts, raw: event, time },
      textOf(event.response_id),
    )
  }

  private assistant(record: JsonRecord, main: Conversation): ObservedRequest[] {
    if (this.covered) {
      this.covered = false
      return []
    }
    const value = record.value
    const metadata = fieldsOf(value.usageMetadata)
    if (value.usageMetadata === undefined)
      return this.skips.add(record.where, 'with no usage recorded: not counted')
    const counts = {
      prompt: numberOf(metadata.promptTokenCount),
      cached: numberOf(metadata.cachedContentTokenCount),
      output: numberOf(metadata.candidatesTokenCount),
      thoughts: numberOf(metadata.thoughtsTokenCount),
    }
    const time = textOf(value.timestamp)
    return this.request(record, main, { model: textOf(value.model), counts, raw: metadata, time }, undefined)
  }

  private request(
    record: JsonRecord,
    conversation: Conversation,
    response: Response,
    requestId: string | undefined,
  ): ObservedRequest[] {
    const provider = this.auth === undefined ? undefined : PROVIDER_OF_AUTH[this.auth]
    if (provider === undefined)
      return this.skips.add(
        record.where,
        `on auth type ${this.auth ?? 'unrecorded'} skipped: cachelab does not know the wire it was sent on`,
      )
    const { model, counts, raw, time } = response
    const usage = qwenUsage(counts, raw)
    if (usage === undefined || time === undefined) {
      lineProblem(this.file, record.line, 'a response without its token counts or time', this.options)
      return []
    }
    const recorded = model ?? 'unknown'
    if (conversation.model !== undefined && conversation.model !== recorded)
      conversation.events.push({ kind: 'model-switch', from: conversation.model, to: recorded })
    conversation.model = recorded
    conversation.turn = Math.max(conversation.turn, 1)
    conversation.step += 1
    const events = conversation.events
    conversation.events = []
    const version = textOf(record.value.version)
    const session = textOf(record.value.sessionId) as string
    return [
      {
        format: 'qwen-code',
        source: record.where,
        session: conversation.session,
        ...(conversation.kind !== undefined ? { parent: session, kind: conversation.kind } : {}),
        ...(version !== undefined ? { agent: `qwen-code/${version}` } : {}),
        provider,
        model: recorded,
        time,
        usage,
        events,
        turn: conversation.turn,
        step: conversation.step,
        ...(requestId !== undefined ? { requestId } : {}),
      },
    ]
  }
}

/** The requests of a qwen-code session file, in file order. */
export const readQwenCode: TranscriptReader = async function* (file, options) {
  const reading = new QwenCodeReading(file, options)
  for await (const record of readJsonRecords(file, options)) yield* reading.accept(record)
  reading.finish()
}
