// The prompt-cache fields of an OpenAI body as the API validates them: `prompt_cache_options` and the
// `prompt_cache_breakpoint` markers exist from GPT-5.6 on, only on some content parts, with one mode
// and one TTL. A body that breaks these rules gets the API's 400 before anything is cached.

import { isRecord } from '../../harness/json-fields.ts'
import { identicalPrefix } from '../../harness/lineage.ts'
import { SimulatorRejection } from './types.ts'

type Body = Record<string, unknown>
type Api = 'chat' | 'responses'

/** How a GPT-5.6+ request uses the cache (`prompt_cache_options`, defaults applied). */
export interface CacheOptions {
  /** `implicit`: OpenAI adds a breakpoint on the latest message; `explicit`: only the markers count. */
  mode: 'implicit' | 'explicit'
  /** The TTL option as sent; `30m` is the only value the API accepts. */
  ttl: '30m' | undefined
}

/**
 * Content-part types that may carry a `prompt_cache_breakpoint` (the prompt caching guide). The Chat list
 * includes `refusal` although the SDK's `ChatCompletionContentPartRefusal` has no such field: the guide
 * is followed, so the simulator does not refuse what the API may accept. Responses assistant parts
 * (`output_text`, `refusal`) are model output and carry none.
 */
const MARKABLE: Record<Api, ReadonlySet<string>> = {
  chat: new Set(['text', 'image_url', 'input_audio', 'file', 'refusal']),
  responses: new Set(['input_text', 'input_image', 'input_file']),
}

const MARKER = 'prompt_cache_breakpoint'

/** JSON clients send `null` for a field they leave unset. */
const isSet = (value: unknown): boolean => value !== undefined && value !== null

/** The API's 400 in OpenAI's error shape. */
export function invalidRequest(
  message: string,
  param: string,
  code: 'invalid_value' | 'invalid_type' | 'unsupported_parameter' = 'invalid_value',
): SimulatorRejection {
  return new SimulatorRejection(400, message, {
    error: { message, type: 'invalid_request_error', param, code },
  })
}

/** OpenAI's wording for a field a model does not take. */
function unsupported(param: string): SimulatorRejection {
  return invalidRequest(
    `Unsupported parameter: '${param}' is not supported with this model.`,
    param,
    'unsupported_parameter',
  )
}

/** OpenAI's wording for an enum field given another value. */
function invalidValue(value: unknown, supported: readonly string[], param: string): SimulatorRejection {
  const names = supported.map((name) => `'${name}'`)
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : (names[0] ?? '')
  return invalidRequest(`Invalid value: ${JSON.stringify(value)}. Supported values are: ${list}.`, param)
}

/**
 * Items known to carry no marker anywhere: a session resends the same objects, so each is walked once. An
 * item mutated in place after its walk is not walked again (the linearizer memoizes items the same way).
 */
const unmarked = new WeakSet<object>()

/**
 * The items of the last body that passed, per API and breakpoint support: the next body of a session
 * repeats them in the same places (the same objects), and each passes again there, so only the items
 * after them are walked. A list that claims its start is the last one's (`builtFrom`) is not compared there.
 */
const lastPassed = new Map<string, { kept: readonly unknown[]; source: readonly unknown[] }>()

/** One place a marker sits: its parameter path and the content-part type it is on (none on an item). */
interface Marker {
  param: string
  partType: string | undefined
  value: unknown
}

/** The markers of one item (message or input item), on the item itself or on its content parts. */
function itemMarkers(item: Body, param: string): Marker[] {
  const found: Marker[] = []
  if (isSet(item[MARKER]))
    found.push({ param: `${param}.${MARKER}`, partType: undefined, value: item[MARKER] })
  // Message content, and the content list a Responses `function_call_output` may give as its output.
  for (const field of ['content', 'output']) {
    const parts = item[field]
    if (!Array.isArray(parts)) continue
    for (const [index, part] of parts.entries()) {
      if (!isRecord(part) || !isSet(part[MARKER])) continue
      const type = typeof part.type === 'string' ? part.type : ''
      found.push({ param: `${param}.${field}[${index}].${MARKER}`, partType: type, value: part[MARKER] })
    }
  }
  return found
}

/** Refuse a misplaced or malformed marker, or any marker on a model without breakpoints. */
function checkMarker(api: Api, marker: Marker, breakpoints: boolean): void {
  if (!breakpoints) throw unsupported(marker.param)
  if (marker.partType === undefined || !MARKABLE[api].has(marker.partType)) {
    const where = marker.partType === undefined ? 'an item' : `a content part of type '${marker.partType}'`
    throw invalidRequest(
      `'${MARKER}' is not supported on ${where}; it may mark ${[...MARKABLE[api]].join(', ')} parts.`,
      marker.param,
    )
  }
  const mode = isRecord(marker.value) ? marker.value.mode : undefined
  if (mode !== 'explicit') throw invalidValue(mode ?? null, ['explicit'], `${marker.param}.mode`)
}

/**
 * Validate the prompt-cache fields of a body and return its options. `breakpoints` says whether the
 * model has GPT-5.6 breakpoint caching; older models reject `prompt_cache_options` and every marker.
 * Throws the API's 400 (`SimulatorRejection`) for the first violation in body order.
 */
export function cacheOptions(api: Api, body: Body, breakpoints: boolean): CacheOptions {
  const raw = body.prompt_cache_options
  let options: CacheOptions = { mode: 'implicit', ttl: undefined }
  if (isSet(raw)) {
    if (!breakpoints) throw unsupported('prompt_cache_options')
    if (!isRecord(raw)) {
      throw invalidRequest(
        `Invalid type for 'prompt_cache_options': expected an object, but got ${Array.isArray(raw) ? 'an array' : `a ${typeof raw}`} instead.`,
        'prompt_cache_options',
        'invalid_type',
      )
    }
    const mode = isSet(raw.mode) ? raw.mode : 'implicit'
    if (mode !== 'implicit' && mode !== 'explicit')
      throw invalidValue(mode, ['implicit', 'explicit'], 'prompt_cache_options.mode')
    const ttl = isSet(raw.ttl) ? raw.ttl : undefined
    if (ttl !== undefined && ttl !== '30m') throw invalidValue(ttl, ['30m'], 'prompt_cache_options.ttl')
    options = { mode, ttl }
  }
  const part = api === 'chat' ? 'messages' : 'input'
  const items = body[part]
  if (!Array.isArray(items)) return options
  const key = `${api}|${breakpoints}`
  const passed = lastPassed.get(key)
  const start = passed === undefined ? 0 : identicalPrefix(items, passed.kept, passed.source)
  for (let index = start; index < items.length; index += 1) {
    const item = items[index]
    if (!isRecord(item) || unmarked.has(item)) continue
    const markers = itemMarkers(item, `${part}[${index}]`)
    if (markers.length === 0) unmarked.add(item)
    for (const marker of markers) checkMarker(api, marker, breakpoints)
  }
  lastPassed.set(key, { kept: items.slice(), source: items })
  return options
}
