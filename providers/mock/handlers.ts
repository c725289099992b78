// The MSW request handlers of every mocked provider API, bound to one MockContext. Base URLs are
// parameters: the real hosts in-process, path prefixes on the loopback server.

import { type HttpHandler, http } from 'msw'
import type { Vendor } from '../catalog.ts'
import { DEFAULT_BASE_URLS } from '../endpoints.ts'
import { handleMessages } from './anthropic.ts'
import { handleChat } from './chat.ts'
import type { MockContext } from './context.ts'
import { handleResponses } from './responses.ts'

/** Build the handlers; `baseURLs` are the SDK base URLs the handlers answer under. */
export function mockHandlers(
  context: MockContext,
  baseURLs: Readonly<Record<Vendor, string>> = DEFAULT_BASE_URLS,
): HttpHandler[] {
  const openai = baseURLs.openai.replace(/\/$/, '')
  const deepseek = baseURLs.deepseek.replace(/\/$/, '')
  const anthropic = baseURLs.anthropic.replace(/\/$/, '')
  return [
    http.post(`${anthropic}/v1/messages`, ({ request }) => handleMessages(request, context)),
    http.post(`${openai}/chat/completions`, ({ request }) => handleChat('openai', request, context)),
    http.post(`${openai}/responses`, ({ request }) => handleResponses(request, context)),
    http.post(`${deepseek}/chat/completions`, ({ request }) => handleChat('deepseek', request, context)),
    http.post(`${deepseek}/v1/chat/completions`, ({ request }) => handleChat('deepseek', request, context)),
  ]
}
