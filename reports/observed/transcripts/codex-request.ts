// The Responses API body a Codex request sent, rebuilt from its rollout: the base instructions, the
// input items the rollout recorded up to the request (replaced by a compaction's replacement history),
// the model and the conversation id Codex sends as `prompt_cache_key`. What the rollout does not hold is
// named in `estimated`: the built-in tool schemas (left out) and what the reasoning items' encrypted
// content stands for (a stand-in of the recorded reasoning tokens). See
// notes/2026-11-30-import-codex-rebuild.md.

import { isRecord } from '../../../harness/json-fields.ts'
import type { ObservedRequest } from './types.ts'

/** Response items the model produced; everything else in the history is input the client added. */
const OUTPUT_TYPES = new Set([
  'reasoning',
  'function_call',
  'custom_tool_call',
  'local_shell_call',
  'web_search_call',
])

/** Response item types Codex sends back to the model (other rollout items, such as snapshots, stay local). */
const SENT_TYPES = new Set(['message', ...OUTPUT_TYPES, 'function_call_output', 'custom_tool_call_output'])

/** What every rebuilt body leaves out or stands in for, because no rollout records it. */
export const CODEX_ESTIMATED =
  'no tool schemas (Codex’s built-in tools depend on the CLI version and are not on disk); each reasoning item’s encrypted content replaced by a stand-in as many tokens long as its response’s recorded reasoning tokens'

/** Whether an item is the model's output (an assistant message, a reasoning item or a tool call). */
function isOutput(item: Record<string, unknown>): boolean {
  const type = typeof item.type === 'string' ? item.type : 'message'
  return type === 'message' ? item.role === 'assistant' : OUTPUT_TYPES.has(type)
}

/**
 * A reasoning item as the rebuilt body carries it: its `encrypted_content` replaced by `tokens` tokens
 * of stand-in text (" x" is one o200k token), since the opaque blob's length says nothing of the
 * reasoning it carries back, which the provider counts as input within the turn.
 */
export function sizedReasoning(item: Record<string, unknown>, tokens: number): Record<string, unknown> {
  const { encrypted_content: _encrypted, ...rest } = item
  return { ...rest, encrypted_content: ' x'.repeat(Math.max(0, tokens)) }
}

/** Settings of a request that the body carries. */
export interface CodexRequestSettings {
  /** The base instructions (the system prompt); no body is rebuilt without them. */
  instructions: string | undefined
  model: string
  /** The conversation id (Codex's `prompt_cache_key`). */
  conversation: string
  /** `turn_context` `effort` and `summary`, where recorded. */
  effort?: string
  summary?: string
}

/**
 * The conversation history of one rollout, item by item, and the body of the request at each
 * `token_count`. A request's input is the history up to its last client-added item (a user or developer
 * message, a tool output): the model's output items after it belong to the response, whichever side of
 * the `token_count` the rollout wrote them on (Codex 0.40 writes the count first, newer versions after).
 */
export class CodexHistory {
  private items: Record<string, unknown>[] = []
  /** How many leading items the next request sends: up to the last client-added item. */
  private sent = 0
  /** Where reasoning items wait for the reasoning count of the response that produced them. */
  private unsized: number[] = []
  /** A response's reasoning count written before its outputs (Codex 0.40), for its reasoning item to come. */
  private pendingReasoning: number | undefined
  /** A compaction replaced the history by its summary alone (a rollout older than `replacement_history`). */
  private summaryOnly = false
  /** How many items the history held when the previous response was recorded (a `token_usage_record`). */
  private responseEnd = 0

  /** Take a `response_item` payload. */
  add(item: unknown): void {
    if (!isRecord(item) || !SENT_TYPES.has(typeof item.type === 'string' ? item.type : 'message')) return
    if (item.type === 'reasoning') {
      if (this.pendingReasoning !== undefined) {
        this.items.push(sizedReasoning(item, this.pendingReasoning))
        // A second reasoning item of the same response gets none: the count covers the response.
        this.pendingReasoning = 0
      } else {
        this.unsized.push(this.items.length)
        this.items.push(sizedReasoning(item, 0))
      }
      return
    }
    this.items.push(item)
    if (!isOutput(item)) {
      this.sent = this.items.length
      this.pendingReasoning = undefined
    }
  }

  /**
   * A response's recorded reasoning tokens: they size the reasoning items written before the count (a
   * newer Codex), else the one written after it (Codex 0.40 writes the count first).
   */
  count(reasoningTokens: number): void {
    if (this.unsized.length > 0) {
      for (const [order, index] of this.unsized.entries())
        this.items[index] = sizedReasoning(
          this.items[index] as Record<string, unknown>,
          order === 0 ? reasoningTokens : 0,
        )
      this.unsized = []
      this.pendingReasoning = undefined
      return
    }
    this.pendingReasoning = reasoningTokens
  }

  /** A compaction: the history is its replacement from here on (older rollouts keep only a summary). */
  compact(payload: Record<string, unknown>): void {
    if (Array.isArray(payload.replacement_history)) {
      // A reasoning item kept through the compaction is of an earlier turn: the provider drops it.
      this.items = payload.replacement_history
        .filter(isRecord)
        .map((item) => (item.type === 'reasoning' ? sizedReasoning(item, 0) : item))
      this.sent = this.items.length
      this.responseEnd = this.items.length
      this.unsized = []
      this.pendingReasoning = undefined
      this.summaryOnly = false
      return
    }
    if (typeof payload.message === 'string') {
      this.items = [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: payload.message }] },
      ]
      this.sent = 1
      this.responseEnd = 1
      this.unsized = []
      this.pendingReasoning = undefined
      this.summaryOnly = true
    }
  }

  /**
   * A response recorded (0.169's `token_usage_record`, written as it completes, before the tool outputs
   * that follow it and before its `token_count`): how many items its request sent — everything before its
   * own output, which is the earlier responses' items and the client's items since.
   */
  responseRecorded(): number {
    const input = Math.max(this.sent, this.responseEnd)
    this.responseEnd = this.items.length
    return input
  }

  /**
   * The body of a compaction request that sent the first `items` items and Codex's own compaction
   * instruction, which no rollout records (left out); it sends no tools.
   */
  compactionRequest(items: number, settings: CodexRequestSettings): ObservedRequest['request'] {
    const body = this.body(this.items.slice(0, items), settings)
    return (
      body && {
        ...body,
        estimated: `${body.estimated}; the compaction instruction Codex appends is not recorded (left out)`,
      }
    )
  }

  /**
   * The body of the request made now (of the first `items` items where the response's record said), or
   * undefined without instructions (the system prompt is unknown).
   */
  request(settings: CodexRequestSettings, items = this.sent): ObservedRequest['request'] {
    return this.body(this.items.slice(0, items), settings)
  }

  private body(input: Record<string, unknown>[], settings: CodexRequestSettings): ObservedRequest['request'] {
    if (settings.instructions === undefined) return undefined
    const reasoning = {
      ...(settings.effort !== undefined ? { effort: settings.effort } : {}),
      ...(settings.summary !== undefined ? { summary: settings.summary } : {}),
    }
    return {
      api: 'openai-responses',
      body: {
        model: settings.model,
        instructions: settings.instructions,
        input,
        ...(Object.keys(reasoning).length > 0 ? { reasoning } : {}),
        store: false,
        stream: true,
        include: ['reasoning.encrypted_content'],
        prompt_cache_key: settings.conversation,
      },
      estimated: this.summaryOnly
        ? `${CODEX_ESTIMATED}; the history after a compaction is its summary alone (no replacement history recorded)`
        : CODEX_ESTIMATED,
      // The bodies lack the tool schemas Codex sent: a simulator's read of them is no prediction of the
      // provider's (notes/2026-12-02-import-codex-0169.md).
      withoutTools: true,
    }
  }
}
