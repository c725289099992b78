// The MSW request handlers of every mocked provider API, bound to one MockContext. Base URLs are
// parameters (the real hosts by default); the loopback server rewrites its paths onto the real hosts.

import { type HttpHandler, http } from 'msw'
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
import { handleResponses } from './responses.ts'

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
    http.get(`${root}/models`, ({ request }) => handleModelList(vendor, request)),
    http.get(`${root}/models/:model`, ({ params }) => handleModel(vendor, String(params.model))),
  ]
  return [
    http.post(`${anthropic}/messages`, ({ request }) => handleMessages(request, context)),
    ...models('anthropic', anthropic),
    http.post(`${openai}/chat/completions`, ({ request }) => handleChat('openai', request, context)),
    http.post(`${openai}/responses`, ({ request }) => handleResponses(request, context)),
    ...models('openai', openai),
    ...deepseekRoots.flatMap((root) => [
      http.post(`${root}/chat/completions`, ({ request }) => handleChat('deepseek', request, context)),
      ...models('deepseek', root),
    ]),
    ...models('gemini', gemini),
    // `models/{model}:generateContent` is one path segment: the handler splits model and method.
    http.post(`${gemini}/models/:call`, ({ params, request }) =>
      handleGeminiModelCall(String(params.call), request, context),
    ),
    http.post(`${gemini}/cachedContents`, ({ request }) => handleCreateCache(request, context)),
    http.get(`${gemini}/cachedContents`, ({ request }) => handleListCaches(request, context)),
    http.get(`${gemini}/cachedContents/:id`, ({ params, request }) =>
      handleGetCache(String(params.id), request, context),
    ),
    http.patch(`${gemini}/cachedContents/:id`, ({ params, request }) =>
      handleUpdateCache(String(params.id), request, context),
    ),
    http.delete(`${gemini}/cachedContents/:id`, ({ params, request }) =>
      handleDeleteCache(String(params.id), request, context),
    ),
    // Bedrock Runtime: the model id (URL-encoded by the SDK: `…-v1%3A0`) is a path segment.
    http.post(`${bedrock}/model/:modelId/converse`, ({ request, params }) =>
      handleConverse(request, context, decodeURIComponent(String(params.modelId)), false),
    ),
    http.post(`${bedrock}/model/:modelId/converse-stream`, ({ request, params }) =>
      handleConverse(request, context, decodeURIComponent(String(params.modelId)), true),
    ),
    // Each compatible provider on its own real base URL (the catalog's), as the OpenAI SDK reaches it.
    ...compatibleProviders().flatMap((provider) => {
      const root = provider.baseURL.replace(/\/$/, '')
      // An Anthropic-compatible API on its base URL, as Anthropic's SDK reaches it (`${base}/v1/messages`).
      if (speaksMessages(provider))
        return [
          http.post(`${root}/v1/messages`, ({ request }) =>
            handleMessages(request, context, compatibleApi(provider.id, 'messages')),
          ),
          ...models(provider.id, `${root}/v1`),
        ]
      return [
        http.post(`${root}/chat/completions`, ({ request }) => handleChat(provider.id, request, context)),
        ...models(provider.id, root),
      ]
    }),
  ]
}
