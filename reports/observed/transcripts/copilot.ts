// GitHub Copilot CLI session files (`~/.copilot/session-state/<sessionId>/events.jsonl`, or under
// `$COPILOT_HOME`): one event a line, `{type, data, id, timestamp, parentId}`, a subagent's events marked
// with its `agentId`. Every response it gets is a `session.usage_record` (the main conversation's and its
// subagents'), whose `inputTokens` hold both cache buckets; its compaction request is counted once, in
// `session.compaction_complete`. A `session.resume` opens each process that continued the session. See
// notes/2026-12-08-copilot-cli.md.

import type { ProviderId, Usage } from '../../../harness/types.ts'
import { type Fields, fieldsOf, numberOf, textOf } from './fields.ts'
import { JsonPicker } from './json-pick.ts'
import { type JsonRecord, lineProblem, readJsonRecordBatches, SkipTally } from './lines.ts'
import type { ObservedRequest, ReadOptions, TranscriptEvent, TranscriptReader } from './types.ts'

/**
 * The fields the reader reads: of `data`, only counts and ids, never the messages, the system prompt or the
 * request bodies some events carry whole.
 */
export const COPILOT_FIELDS = new JsonPicker({
  fields: {
    type: 'whole',
    agentId: 'whole',
    timestamp: 'whole',
    data: {
      fields: {
        sessionId: 'whole',
        copilotVersion: 'whole',
        usage: 'whole',
        success: 'whole',
        trigger: 'whole',
        compactionTokensUsed: 'whole',
      },
    },
  },
})

/** Copilot CLI's token counts in cachelab's buckets, or undefined when a count is missing. */
export function copilotUsage(counts: Fields, provider: ProviderId): Usage | undefined {
  const input = numberOf(counts.inputTokens)
  const output = numberOf(counts.outputTokens)
  if (input === undefined || output === undefined) return undefined
  const cacheRead = numberOf(counts.cacheReadTokens) ?? 0
  // OpenAI reports no writes (Copilot records 0 for them): left undefined, as the capture has them.
  const cacheWrite = provider === 'anthropic' ? (numberOf(counts.cacheWriteTokens) ?? 0) : undefined
  const reasoning = numberOf(counts.reasoningTokens)
  return {
    input,
    uncached: input - cacheRead - (cacheWrite ?? 0),
    cacheRead,
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    output,
    ...(reasoning !== undefined && reasoning > 0 ? { reasoning } : {}),
    raw: counts as Usage['raw'],
  }
}

/**
 * The wire a request went over, from its record's provider type and endpoint: a provider of the user's own
 * (`isByok`) only; GitHub's routing is no provider whose cache cachelab models.
 */
function providerOf(usage: Fields): ProviderId | undefined {
  if (usage.isByok !== true) return undefined
  const endpoint = textOf(usage.apiEndpoint) ?? ''
  switch (textOf(usage.providerType)) {
    case 'anthropic':
      return 'anthropic'
    case 'openai':
    case 'azure':
      return endpoint.endsWith('/responses')
        ? 'openai-responses'
        : endpoint.endsWith('/chat/completions')
          ? 'openai-chat'
          : undefined
    default:
      return undefined
  }
}

/** One conversation of the file: the main one, a subagent's, a compaction's. */
interface Conversation {
  name: string
  kind?: 'subagent' | 'compaction'
  model?: string
  turn: number
  step: number
  events: TranscriptEvent[]
}

/** The fold of one Copilot CLI file: fed its events in order, it answers the requests each records. */
export class CopilotReading {
  private session: string | undefined
  private version: string | undefined
  private readonly conversations = new Map<string, Conversation>()
  /** The wire of the latest response: a compaction's record does not name one. */
  private provider: ProviderId | undefined
  private compactions = 0
  private readonly skips = new SkipTally()

  constructor(
    private readonly file: string,
    private readonly options: ReadOptions,
  ) {}

  accept(record: JsonRecord): ObservedRequest[] {
    const value = record.value
    const data = fieldsOf(value.data)
    if (value.type === 'session.start') {
      this.session = textOf(data.sessionId)
      this.version = textOf(data.copilotVersion)
      return []
    }
    if (this.session === undefined) return []
    const agent = textOf(value.agentId)
    switch (value.type) {
      case 'session.resume':
        this.main().events.push({ kind: 'resume' })
        return []
      case 'user.message': {
        const conversation = agent === undefined ? this.main() : this.subagent(agent)
        conversation.turn += 1
        conversation.step = 0
        return []
      }
      case 'session.usage_record':
        return this.usageRecord(record, agent === undefined ? this.main() : this.subagent(agent))
      case 'session.compaction_complete':
        return this.compaction(record, data)
      default:
        return []
    }
  }

  /** Report what was left uncounted, once the file is read. */
  finish(): void {
    this.skips.report(this.options)
  }

  private main(): Conversation {
    return this.conversation(this.session as string)
  }

  /** A subagent's conversation, named as a capture names a subagent: the session, then its part. */
  private subagent(id: string): Conversation {
    return this.conversation(`${this.session}.subagent-${id}`, 'subagent')
  }

  private conversation(name: string, kind?: Conversation['kind']): Conversation {
    let conversation = this.conversations.get(name)
    if (conversation === undefined) {
      conversation = { name, ...(kind !== undefined ? { kind } : {}), turn: 0, step: 0, events: [] }
      this.conversations.set(name, conversation)
    }
    return conversation
  }

  private usageRecord(record: JsonRecord, conversation: Conversation): ObservedRequest[] {
    const usage = fieldsOf(fieldsOf(record.value.data).usage)
    const provider = providerOf(usage)
    if (provider === undefined)
      return this.skips.add(
        record.where,
        usage.isByok === true
          ? `on provider type ${textOf(usage.providerType) ?? 'unrecorded'} at ${textOf(usage.apiEndpoint) ?? 'an unrecorded endpoint'} skipped: cachelab does not know the wire it was sent on`
          : "sent through GitHub Copilot's own model routing skipped: cachelab does not know its cache",
      )
    this.provider = provider
    return this.request(record, conversation, provider, usage, textOf(usage.apiCallId))
  }

  /** A compaction's request, as its own conversation; the main one's next request follows a compaction. */
  private compaction(record: JsonRecord, data: Fields): ObservedRequest[] {
    const main = this.main()
    main.events.push({ kind: 'compaction', detail: `${textOf(data.trigger) ?? 'a'} compaction` })
    if (data.success !== true) return []
    const used = fieldsOf(data.compactionTokensUsed)
    const count = numberOf(used.requestCount)
    if (this.provider === undefined)
      return this.skips.add(record.where, 'of a compaction before any request named its wire: not counted')
    if (count !== 1)
      return this.skips.add(
        record.where,
        `of a compaction recorded as the sum of ${count ?? 'an unrecorded number of'} requests: not counted`,
      )
    this.compactions += 1
    const conversation = this.conversation(`${this.session}.compaction-${this.compactions}`, 'compaction')
    conversation.turn = 1
    return this.request(record, conversation, this.provider, used, undefined)
  }

  private request(
    record: JsonRecord,
    conversation: Conversation,
    provider: ProviderId,
    counts: Fields,
    requestId: string | undefined,
  ): ObservedRequest[] {
    const usage = copilotUsage(counts, provider)
    const time = textOf(record.value.timestamp)
    if (usage === undefined || time === undefined) {
      lineProblem(this.file, record.line, 'a response without its token counts or time', this.options)
      return []
    }
    const model = textOf(counts.model) ?? 'unknown'
    if (conversation.model !== undefined && conversation.model !== model)
      conversation.events.push({ kind: 'model-switch', from: conversation.model, to: model })
    conversation.model = model
    conversation.turn = Math.max(conversation.turn, 1)
    conversation.step += 1
    const events = conversation.events
    conversation.events = []
    return [
      {
        format: 'copilot',
        source: record.where,
        session: conversation.name,
        ...(conversation.kind !== undefined
          ? { parent: this.session as string, kind: conversation.kind }
          : {}),
        ...(this.version !== undefined ? { agent: `copilot/${this.version}` } : {}),
        provider,
        model,
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

/** The requests of a Copilot CLI session's events file, in file order. */
export const readCopilot: TranscriptReader = async function* (file, options) {
  const reading = new CopilotReading(file, options)
  for await (const batch of readJsonRecordBatches(file, options, { pick: COPILOT_FIELDS }))
    for (const record of batch) yield* reading.accept(record)
  reading.finish()
}
