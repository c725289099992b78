// Factory Droid's own log (`~/.factory/logs/droid-log-single.log`, or under `$FACTORY_HOME_OVERRIDE`): its
// session files (`~/.factory/sessions/<cwd>/<id>.jsonl`) keep messages without usage, and the session's
// `<id>.settings.json` keeps only running totals, so the log is where each request's usage is: one
// `[Agent] Streaming result` entry per answered request, tagged with the session and model. A BYOK model
// (`custom:<display-name>-<n>`) is resolved through `customModels` in the settings beside the log folder.
// See notes/2026-12-08-more-transcript-formats.md.

import { createReadStream, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import type { ProviderId, Usage } from '../../../harness/types.ts'
import { type Fields, fieldsOf, listOf, numberOf, textOf } from './fields.ts'
import { lineProblem, SkipTally } from './lines.ts'
import { jsoncText } from './opencode.ts'
import type { ObservedRequest, ReadOptions, TranscriptEvent, TranscriptReader } from './types.ts'

/** The entry that carries one answered request's usage. */
const STREAMING_RESULT =
  /^\[(\d{4}-\d\d-\d\dT[\d:.]+Z)\] [A-Z]+: \[Agent\] Streaming result \| Context: (.*)$/

/** A model as Droid's settings configure it: the id sent, and the wire its `provider` speaks. */
export interface DroidModel {
  model: string
  provider: ProviderId | undefined
}

/** The wire API of a custom model's `provider` (Droid's three kinds). */
function providerOfKind(kind: string | undefined, model: string): ProviderId | undefined {
  if (kind === 'anthropic') return 'anthropic'
  if (kind === 'openai') return 'openai-responses'
  // Any Chat Completions endpoint; DeepSeek's own counts its cache on its own rule.
  if (kind === 'generic-chat-completion-api') return /^deepseek/i.test(model) ? 'deepseek' : 'openai-chat'
  return undefined
}

/** The wire API of a model Factory serves itself, by its name; undefined when the name does not tell. */
function providerOfName(model: string): ProviderId | undefined {
  if (/^claude/i.test(model)) return 'anthropic'
  if (/^(gpt|o\d)/i.test(model)) return 'openai-responses'
  if (/^gemini/i.test(model)) return 'gemini'
  return undefined
}

/** Droid's id of a custom model: its display name with runs of space as `-`, numbered among same names. */
const customId = (displayName: string, index: number) =>
  `custom:${displayName.trim().replace(/\s+/g, '-')}-${index}`

/**
 * The custom models of the settings files in `factoryDir` by Droid's id for them: `settings.json` and
 * `settings.local.json` (`customModels`, camelCase) over the legacy `config.json` (`custom_models`).
 */
export function customModels(factoryDir: string): Map<string, DroidModel> {
  const models = new Map<string, DroidModel>()
  const files: [string, 'customModels' | 'custom_models'][] = [
    ['config.json', 'custom_models'],
    ['settings.json', 'customModels'],
    ['settings.local.json', 'customModels'],
  ]
  for (const [name, key] of files) {
    let settings: Fields
    try {
      settings = fieldsOf(JSON.parse(jsoncText(readFileSync(join(factoryDir, name), 'utf8'))))
    } catch {
      continue
    }
    const seen = new Map<string, number>()
    for (const entry of listOf(settings[key])) {
      const fields = fieldsOf(entry)
      const model = textOf(fields.model)
      if (model === undefined) continue
      const displayName = textOf(fields.displayName) ?? textOf(fields.model_display_name) ?? model
      const sanitized = displayName.trim().replace(/\s+/g, '-')
      const index = seen.get(sanitized) ?? 0
      seen.set(sanitized, index + 1)
      const resolved = { model, provider: providerOfKind(textOf(fields.provider), model) }
      models.set(customId(displayName, index), resolved)
      // An explicit id, where the entry has one, names it too.
      const id = textOf(fields.id)
      if (id !== undefined) models.set(id, resolved)
    }
  }
  return models
}

/** The model and wire of a Droid model id: a custom one through the settings, else Factory's own name. */
export function droidModel(modelId: string, custom: ReadonlyMap<string, DroidModel>): DroidModel {
  const configured = custom.get(modelId)
  if (configured !== undefined) return configured
  if (modelId.startsWith('custom:')) return { model: modelId.slice('custom:'.length), provider: undefined }
  return { model: modelId, provider: providerOfName(modelId) }
}

/**
 * A `Streaming result` entry in cachelab's buckets. Droid logs the provider's counts apart: `inputTokens`
 * uncached (it takes the cached part out of OpenAI's and DeepSeek's prompt count), `cacheReadInputTokens`,
 * `cachedTokensWritten` (Anthropic's writes; 0 where the wire reports none) and `outputTokens`, reasoning
 * included. Its `reasoningTokens` is the Responses API's count there; elsewhere it is no count of the
 * provider's (it equals the output on Anthropic, 0 on DeepSeek), so it is left out.
 */
export function droidUsage(context: Fields, provider: ProviderId): Usage | undefined {
  const uncached = numberOf(context.inputTokens)
  const output = numberOf(context.outputTokens)
  if (uncached === undefined || output === undefined) return undefined
  const cacheRead = numberOf(context.cacheReadInputTokens)
  const written = numberOf(context.cachedTokensWritten)
  const cacheWrite =
    provider === 'anthropic' || provider === 'bedrock' || (written ?? 0) > 0 ? written : undefined
  const reasoning = provider === 'openai-responses' ? numberOf(context.reasoningTokens) : undefined
  const { tags: _tags, ...raw } = context
  return {
    input: uncached + (cacheRead ?? 0) + (cacheWrite ?? 0),
    uncached,
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    output,
    ...(reasoning !== undefined && reasoning > 0 ? { reasoning } : {}),
    raw: raw as Usage['raw'],
  }
}

/** What the reader keeps of a session between its requests. */
interface DroidSession {
  step: number
  model: string | undefined
}

/**
 * Read Droid's log: each answered request in log order, its session the one its entry is tagged with. A
 * session file (`sessions/<cwd>/<id>.jsonl`, found beside the log when a whole `.factory` is walked) holds
 * no usage: it gives no request, and a note says where its requests are.
 */
export const readDroid: TranscriptReader = async function* (file: string, options: ReadOptions) {
  if (file.endsWith('.jsonl')) {
    options.onNote?.({
      where: file,
      message:
        "Droid session file: it holds no usage (its requests are read from Droid's log, logs/droid-log-single.log)",
    })
    return
  }
  const custom = customModels(dirname(dirname(file)))
  const sessions = new Map<string, DroidSession>()
  const skips = new SkipTally()
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY })
  let number = 0
  for await (const line of lines) {
    number += 1
    const entry = STREAMING_RESULT.exec(line)
    if (entry === null) continue
    const where = `${file}:${number}`
    let context: Fields
    try {
      context = fieldsOf(JSON.parse(entry[2] as string))
    } catch {
      lineProblem(file, number, 'a Streaming result entry whose context is not JSON', options)
      continue
    }
    const tags = fieldsOf(context.tags)
    const sessionId = textOf(tags.sessionId)
    const modelId = textOf(tags.modelId)
    if (sessionId === undefined || modelId === undefined) {
      lineProblem(file, number, 'a Streaming result entry without its session and model tags', options)
      continue
    }
    const { model, provider } = droidModel(modelId, custom)
    if (provider === undefined) {
      skips.add(
        where,
        `on Droid model ${modelId} skipped: no wire API known for it (no customModels entry in the settings beside the log, and its name tells none)`,
      )
      continue
    }
    const usage = droidUsage(context, provider)
    if (usage === undefined) {
      lineProblem(file, number, 'a Streaming result entry without inputTokens and outputTokens', options)
      continue
    }
    let session = sessions.get(sessionId)
    if (session === undefined) {
      session = { step: 0, model: undefined }
      sessions.set(sessionId, session)
    }
    session.step += 1
    const events: TranscriptEvent[] = []
    if (session.model !== undefined && session.model !== model)
      events.push({ kind: 'model-switch', from: session.model, to: model })
    session.model = model
    const version = textOf(tags.version)
    const requestId = textOf(context.upstreamRequestId)
    const request: ObservedRequest = {
      format: 'droid',
      source: where,
      session: sessionId,
      ...(version !== undefined ? { agent: `droid/${version}` } : {}),
      provider,
      model,
      time: entry[1] as string,
      usage,
      events,
      step: session.step,
      ...(requestId !== undefined ? { requestId } : {}),
    }
    yield request
  }
  skips.report(options)
}
