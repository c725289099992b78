// The MSW request handlers of every mocked provider API, bound to one MockContext. Base URLs are
// parameters (the real hosts by default); the loopback server rewrites its paths onto the real hosts.
// Each handler's resolver calls one endpoint function, which the loopback server may call itself
// (dispatch.ts): the list below is the only definition of what is served, in process and over HTTP.

import { type HttpHandler, http, type PathParams } from 'msw'
import type { BuiltInVendor, Vendor } from '../catalog.ts'
import { compatibleProviders, speaksMessages } from '../compatible.ts'
import { DEFAULT_BASE_URLS } from '../endpoints.ts'
import { compatibleApi } from '../types.ts'
import { handleMessages } from './anthropic.ts'
import { handleConverse } from './bedrock.ts'
import { handleChat } from './chat.ts'
import type { MockContext } from './context.ts'
import {
  GEMINI_API_VERSION,
  handleCreateCache,
  handleDeleteCache,
  handleGeminiModelCall,
  handleGetCache,
  handleListCaches,
  handleUpdateCache,
} from './gemini.ts'
import { handleModel, handleModelList } from './models.ts'
import { type MockAnswer, type MockHttpRequest, toResponse } from './request.ts'
import { handleResponses } from './responses.ts'

/** What a handler answers a request with, given the request and the parameters its path matched. */
export type Endpoint = (request: MockHttpRequest, params: PathParams) => MockAnswer | Promise<MockAnswer>

/** The endpoint each handler's resolver calls, by handler. */
const endpoints = new WeakMap<HttpHandler, Endpoint>()

/** The endpoint a handler of `mockHandlers` resolves with; undefined for any other handler. */
export function endpointOf(handler: HttpHandler): Endpoint | undefined {
  return endpoints.get(handler)
}

/** An MSW handler whose resolver is `endpoint`, remembered so the loopback server can call it directly. */
function route(method: 'get' | 'post' | 'patch' | 'delete', path: string, endpoint: Endpoint): HttpHandler {
  const handler = http[method](path, async ({ request, params }) =>
    toResponse(await endpoint(request, params)),
  )
  endpoints.set(handler, endpoint)
  return handler
}

/** Build the handlers; `baseURLs` are the SDK base URLs the handlers answer under. */
export function mockHandlers(
  context: MockContext,
  baseURLs: Readonly<Record<BuiltInVendor, string>> = DEFAULT_BASE_URLS,
): HttpHandler[] {
  const openai = baseURLs.openai.replace(/\/$/, '')
  // DeepSeek serves its OpenAI-compatible paths with and without /v1; Anthropic's SDK base has no /v1.
  const deepseekRoots = [baseURLs.deepseek.replace(/\/$/, ''), `${baseURLs.deepseek.replace(/\/$/, '')}/v1`]
  const anthropic = `${baseURLs.anthropic.replace(/\/$/, '')}/v1`
  const bedrock = baseURLs.bedrock.replace(/\/$/, '')
  const gemini = `${baseURLs.gemini.replace(/\/$/, '')}/${GEMINI_API_VERSION}`
  const models = (vendor: Vendor, root: string): HttpHandler[] => [
    route('get', `${root}/models`, (request) => handleModelList(vendor, request)),
    route('get', `${root}/models/:model`, (_request, params) => handleModel(vendor, String(params.model))),
  ]
  return [
    route('post', `${anthropic}/messages`, (request) => handleMessages(request, context)),
    ...models('anthropic', anthropic),
    route('post', `${openai}/chat/completions`, (request) => handleChat('openai', request, context)),
    route('post', `${openai}/responses`, (request) => handleResponses(request, context)),
    ...models('openai', openai),
    ...deepseekRoots.flatMap((root) => [
      route('post', `${root}/chat/completions`, (request) => handleChat('deepseek', request, context)),
      ...models('deepseek', root),
    ]),
    ...models('gemini', gemini),
    // `models/{model}:generateContent` is one path segment: the handler splits model and method.
    route('post', `${gemini}/models/:call`, (request, params) =>
      handleGeminiModelCall(String(params.call), request, context),
    ),
    route('post', `${gemini}/cachedContents`, (request) => handleCreateCache(request, context)),
    route('get', `${gemini}/cachedContents`, (request) => handleListCaches(request, context)),
    route('get', `${gemini}/cachedContents/:id`, (request, params) =>
      handleGetCache(String(params.id), request, context),
    ),
    route('patch', `${gemini}/cachedContents/:id`, (request, params) =>
      handleUpdateCache(String(params.id), request, context),
    ),
    route('delete', `${gemini}/cachedContents/:id`, (request, params) =>
      handleDeleteCache(String(params.id), request, context),
    ),
    // Bedrock Runtime: the model id (URL-encoded by the SDK: `…-v1%3A0`) is a path segment.
    route('post', `${bedrock}/model/:modelId/converse`, (request, params) =>
      handleConverse(request, context, decodeURIComponent(String(params.modelId)), false),
    ),
    route('post', `${bedrock}/model/:modelId/converse-stream`, (request, params) =>
      handleConverse(request, context, decodeURIComponent(String(params.modelId)), true),
    ),
    // Each compatible provider on its own real base URL (the catalog's), as the OpenAI SDK reaches it.
    ...compatibleProviders().flatMap((provider) => {
      const root = provider.baseURL.replace(/\/$/, '')
      // An Anthropic-compatible API on its base URL, as Anthropic's SDK reaches it (`${base}/v1/messages`).
      if (speaksMessages(provider))
        return [
          route('post', `${root}/v1/messages`, (request) =>
            handleMessages(request, context, compatibleApi(provider.id, 'messages')),
          ),
          ...models(provider.id, `${root}/v1`),
        ]
      return [
        route('post', `${root}/chat/completions`, (request) => handleChat(provider.id, request, context)),
        ...models(provider.id, root),
      ]
    }),
  ]
}
