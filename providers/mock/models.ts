// Mock model listings: each vendor's `GET …/models` and `GET …/models/{id}` in the vendor's own shape,
// from the model catalog, so a client that lists or probes models before it chats finds the models the
// simulators price. Release dates, limits and capabilities are not in the catalog and are sent as the
// APIs' "unknown" values (the Unix epoch, null), never invented.

import { catalogEntries, type ModelEntry, type Vendor } from '../catalog.ts'
import { jsonAnswer, type MockAnswer, type MockHttpRequest } from './request.ts'

/** Anthropic's `created_at` for a model whose release date is unknown (the API's own convention). */
const UNKNOWN_RELEASE = '1970-01-01T00:00:00Z'

/** Anthropic's page size bounds for `GET /v1/models` (default 20, 1 to 1,000). */
const ANTHROPIC_PAGE = { default: 20, min: 1, max: 1000 } as const

function catalogModels(vendor: Vendor): ModelEntry[] {
  return catalogEntries().filter((entry) => entry.vendor === vendor)
}

/** A human-readable name from a catalog id: `claude-sonnet-4-6` → `Claude Sonnet 4.6`. */
export function displayName(model: string): string {
  const words: string[] = []
  for (const part of model.split('-')) {
    const previous = words.at(-1)
    if (/^\d+$/.test(part) && previous !== undefined && /\d$/.test(previous)) {
      words[words.length - 1] = `${previous}.${part}`
    } else {
      words.push(/^\d/.test(part) ? part : `${part.charAt(0).toUpperCase()}${part.slice(1)}`)
    }
  }
  return words.join(' ')
}

/** One model in the shape of the vendor's API. */
export function modelObject(entry: ModelEntry): Record<string, unknown> {
  switch (entry.vendor) {
    case 'anthropic':
      return {
        type: 'model',
        id: entry.model,
        display_name: displayName(entry.model),
        created_at: UNKNOWN_RELEASE,
        capabilities: null,
        deprecated_at: null,
        lifecycle: 'active',
        line: null,
        max_input_tokens: null,
        max_tokens: null,
        retires_at: null,
      }
    case 'openai':
      return { id: entry.model, object: 'model', created: 0, owned_by: 'system' }
    case 'deepseek':
      return { id: entry.model, object: 'model', owned_by: 'deepseek' }
    case 'bedrock':
      // Bedrock lists models on its control plane (ListFoundationModels), not on Bedrock Runtime.
      return {
        modelId: entry.model,
        modelName: displayName(entry.model),
        providerName:
          entry.request.kind === 'bedrock' && entry.request.family === 'nova' ? 'Amazon' : 'Anthropic',
      }
    case 'gemini':
      // Limits and versions are not in the catalog; the methods are what the mock serves.
      return {
        name: `models/${entry.model}`,
        displayName: displayName(entry.model),
        supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent'],
      }
    default:
      // A compatible provider answers in OpenAI's list shape; its creation date is not in the catalog.
      return { id: entry.model, object: 'model', created: 0, owned_by: entry.vendor }
  }
}

/**
 * The body of `GET …/models`: OpenAI's and DeepSeek's `{object: "list", data}`, or one page of
 * Anthropic's cursor list (`limit`, `after_id`, `before_id`; `has_more` in the requested direction), or
 * the reason a query is refused.
 */
export function modelList(vendor: Vendor, query: URLSearchParams): { body: unknown } | { problem: string } {
  const data = catalogModels(vendor).map(modelObject)
  // Gemini lists `{models}` (one page: the catalog is short).
  if (vendor === 'gemini') return { body: { models: data } }
  if (vendor !== 'anthropic') return { body: { object: 'list', data } }
  const limitText = query.get('limit')
  const limit = limitText === null ? ANTHROPIC_PAGE.default : Number(limitText)
  if (!Number.isInteger(limit) || limit < ANTHROPIC_PAGE.min || limit > ANTHROPIC_PAGE.max)
    return { problem: `limit: Input should be between ${ANTHROPIC_PAGE.min} and ${ANTHROPIC_PAGE.max}` }
  // A cursor names a model of the list; an unknown one leaves nothing on either side of it.
  const ids = data.map((model) => model.id)
  const beforeId = query.get('before_id')
  const cursor = beforeId ?? query.get('after_id')
  const at = cursor === null ? -1 : ids.indexOf(cursor)
  let page: Array<Record<string, unknown>> = []
  let hasMore = false
  const known = cursor === null || at >= 0
  if (known && beforeId !== null) {
    const start = Math.max(0, at - limit)
    page = data.slice(start, at)
    hasMore = start > 0
  } else if (known) {
    page = data.slice(at + 1, at + 1 + limit)
    hasMore = at + 1 + limit < data.length
  }
  return {
    body: {
      data: page,
      has_more: hasMore,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
    },
  }
}

/** The catalog model of `GET …/models/{id}`, in the vendor's shape, or undefined when not listed. */
export function findModelObject(vendor: Vendor, id: string): Record<string, unknown> | undefined {
  const entry = catalogModels(vendor).find(
    (candidate) => candidate.model === id || `models/${candidate.model}` === id,
  )
  return entry === undefined ? undefined : modelObject(entry)
}

/** The vendor's error response of a model request. */
function modelError(vendor: Vendor, status: number, message: string, code: string | null): MockAnswer {
  if (vendor === 'gemini')
    return jsonAnswer(status, {
      error: { code: status, message, status: status === 404 ? 'NOT_FOUND' : 'INVALID_ARGUMENT' },
    })
  if (vendor === 'anthropic')
    return jsonAnswer(status, {
      type: 'error',
      error: { type: status === 404 ? 'not_found_error' : 'invalid_request_error', message },
    })
  return jsonAnswer(status, { error: { message, type: 'invalid_request_error', param: 'model', code } })
}

/** Answer `GET …/models`. */
export function handleModelList(vendor: Vendor, request: MockHttpRequest): MockAnswer {
  const listed = modelList(vendor, new URL(request.url).searchParams)
  if ('problem' in listed) return modelError(vendor, 400, listed.problem, null)
  return jsonAnswer(200, listed.body)
}

/** Answer `GET …/models/{id}`. */
export function handleModel(vendor: Vendor, id: string): MockAnswer {
  const model = findModelObject(vendor, id)
  if (model !== undefined) return jsonAnswer(200, model)
  return vendor === 'anthropic'
    ? modelError(vendor, 404, `model: ${id}`, null)
    : modelError(vendor, 404, `The model '${id}' does not exist`, 'model_not_found')
}
