// Cline CLI session files (`~/.cline/data/sessions/<session>/<session>.messages.json`, a subagent's
// `agent_<id>.messages.json` beside it, or under `$CLINE_DATA_DIR`): one JSON object rewritten whole,
// `{version, agent, sessionId, origin, messages, system_prompt}`. Each assistant message carries the
// model it came from (`modelInfo`) and the usage of the request that made it (`metrics`): those are the
// requests. The prompt is kept as Cline wrapped it (`<user_input mode="act">…`), not as it was sent, and
// no tool schema is kept: no request body is rebuilt. See notes/2026-12-08-cline.md.

import { readFile } from 'node:fs/promises'
import { CachelabError } from '../../../harness/errors.ts'
import type { ProviderId, Usage } from '../../../harness/types.ts'
import { type Fields, fieldsOf, isoOf, listOf, numberOf, textOf } from './fields.ts'
import { lineProblem, SkipTally } from './lines.ts'
import type { ObservedRequest, ReadOptions, TranscriptEvent, TranscriptReader } from './types.ts'

/** The cachelab provider of each Cline provider id it can tell (`modelInfo.provider`); others are skipped. */
const PROVIDERS: Readonly<Record<string, ProviderId>> = {
  anthropic: 'anthropic',
  // Chat Completions at any base URL (`cline auth -p openai-compatible -b URL`).
  'openai-compatible': 'openai-chat',
  openai: 'openai-chat',
  deepseek: 'deepseek',
}

/**
 * Cline's `metrics` in cachelab's buckets: its `inputTokens` is the whole input (the AI SDK's total:
 * uncached, read and written), so uncached is what remains of it; Chat Completions reports no writes.
 * Undefined when the input or output count is missing.
 */
export function clineUsage(metrics: Fields): Usage | undefined {
  const input = numberOf(metrics.inputTokens)
  const output = numberOf(metrics.outputTokens)
  if (input === undefined || output === undefined) return undefined
  const cacheRead = numberOf(metrics.cacheReadTokens) ?? 0
  const cacheWrite = numberOf(metrics.cacheWriteTokens)
  return {
    input,
    uncached: input - cacheRead - (cacheWrite ?? 0),
    cacheRead,
    ...(cacheWrite !== undefined && cacheWrite > 0 ? { cacheWrite } : {}),
    output,
    raw: metrics as Usage['raw'],
  }
}

/** Whether a user message is a typed prompt, not the tool results Cline sends back as a user message. */
function isPrompt(message: Fields): boolean {
  return listOf(message.content).some((block) => fieldsOf(block).type === 'text')
}

/** The line of each message in the file, by where its id first appears after the previous one's. */
function lineFinder(text: string): (id: string | undefined) => number {
  let cursor = 0
  let line = 1
  return (id) => {
    const at = id === undefined ? -1 : text.indexOf(`"${id}"`, cursor)
    if (at < 0) return line
    for (let index = cursor; index < at; index += 1) if (text.charCodeAt(index) === 10) line += 1
    cursor = at
    return line
  }
}

/** The requests of one Cline session file, in order. */
export async function* readClineSession(file: string, options: ReadOptions): AsyncIterable<ObservedRequest> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new CachelabError('input', `${file}: cannot read (${error.code ?? error.message})`)
  })
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    lineProblem(
      file,
      text.split('\n').length,
      `not a whole JSON object (${error instanceof Error ? error.message : String(error)}): torn or corrupt`,
      options,
    )
    return
  }
  const session = fieldsOf(parsed)
  const id = textOf(session.sessionId)
  if (id === undefined || !Array.isArray(session.messages)) {
    lineProblem(file, 1, 'not a Cline session (no "sessionId" and "messages")', options)
    return
  }
  const origin = fieldsOf(session.origin)
  const parent = session.agent === 'subagent' ? textOf(origin.parentThreadId) : undefined
  const version = textOf(origin.version)
  const lineOf = lineFinder(text)
  const skips = new SkipTally()
  let turn = 0
  let step = 0
  let model: string | undefined
  let events: TranscriptEvent[] = []
  for (const entry of session.messages) {
    const message = fieldsOf(entry)
    const where = `${file}:${lineOf(textOf(message.id))}`
    if (message.role === 'user') {
      if (isPrompt(message)) {
        turn += 1
        step = 0
      }
      continue
    }
    if (message.role !== 'assistant') continue
    if (message.metrics === undefined) {
      skips.add(where, 'with no usage recorded: not counted')
      continue
    }
    const info = fieldsOf(message.modelInfo)
    const provider = PROVIDERS[textOf(info.provider) ?? '']
    if (provider === undefined) {
      skips.add(
        where,
        `on provider ${textOf(info.provider) ?? 'unrecorded'} skipped: cachelab does not know the wire it was sent on`,
      )
      continue
    }
    const usage = clineUsage(fieldsOf(message.metrics))
    const time = isoOf(numberOf(message.ts))
    if (usage === undefined || time === undefined) {
      lineProblem(file, lineOf(undefined), 'a response without its token counts or time', options)
      continue
    }
    const recorded = textOf(info.id) ?? 'unknown'
    if (model !== undefined && model !== recorded)
      events.push({ kind: 'model-switch', from: model, to: recorded })
    model = recorded
    // A subagent's task is its first message: its requests are turn 1 like a capture's.
    turn = Math.max(turn, 1)
    step += 1
    yield {
      format: 'cline',
      source: where,
      session: id,
      ...(parent !== undefined ? { parent, kind: 'subagent' as const } : {}),
      ...(version !== undefined ? { agent: `cline/${version}` } : {}),
      provider,
      model: recorded,
      time,
      usage,
      events,
      turn,
      step,
    }
    events = []
  }
  skips.report(options)
}

export const readCline: TranscriptReader = readClineSession
