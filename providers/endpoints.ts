// Where each provider is reached and with which key: the real APIs (keys from the environment or
// .env), the in-process simulator (the real URLs, intercepted by MSW, with placeholder keys), or a
// loopback server. Keys never leave this module except inside an SDK client.

import type { ProviderId } from '../harness/types.ts'
import { type Vendor, vendorOf } from './catalog.ts'

/** An SDK client's target. */
export interface Endpoint {
  baseURL: string
  apiKey: string
  /** The fetch the SDK uses; defaults to a late-bound global fetch so MSW interception applies. */
  fetch?: typeof fetch
}

/** The real APIs' base URLs, as the SDKs expect them. */
export const DEFAULT_BASE_URLS: Readonly<Record<Vendor, string>> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
  deepseek: 'https://api.deepseek.com',
  gemini: 'https://generativelanguage.googleapis.com',
}

/** Environment variables of each vendor. */
export const ENV_NAMES: Readonly<Record<Vendor, { key: string; baseURL: string; model: string }>> = {
  anthropic: { key: 'ANTHROPIC_API_KEY', baseURL: 'ANTHROPIC_BASE_URL', model: 'CACHELAB_ANTHROPIC_MODEL' },
  openai: { key: 'OPENAI_API_KEY', baseURL: 'OPENAI_BASE_URL', model: 'CACHELAB_OPENAI_MODEL' },
  deepseek: { key: 'DEEPSEEK_API_KEY', baseURL: 'DEEPSEEK_BASE_URL', model: 'CACHELAB_DEEPSEEK_MODEL' },
  gemini: { key: 'GEMINI_API_KEY', baseURL: 'GEMINI_BASE_URL', model: 'CACHELAB_GEMINI_MODEL' },
}

/** The key placeholder of simulated runs; the mock providers accept any key. */
export const SIMULATED_KEY = 'cachelab-simulated-key'

/** A fetch that looks up the global at call time (MSW patches the global after clients exist). */
export const lateBoundFetch: typeof fetch = (input, init) => globalThis.fetch(input, init)

/** The simulated endpoint of a provider: real URL, placeholder key. */
export function simulatedEndpoint(provider: ProviderId): Endpoint {
  return { baseURL: DEFAULT_BASE_URLS[vendorOf(provider)], apiKey: SIMULATED_KEY, fetch: lateBoundFetch }
}

/** The live endpoint of a provider from the environment, or the name of the missing key variable. */
export function liveEndpoint(
  provider: ProviderId,
  env: Readonly<Record<string, string | undefined>>,
): { endpoint: Endpoint } | { missing: string } {
  const names = ENV_NAMES[vendorOf(provider)]
  const apiKey = env[names.key]
  if (apiKey === undefined || apiKey.trim() === '') return { missing: names.key }
  const baseURL = env[names.baseURL]?.trim() || DEFAULT_BASE_URLS[vendorOf(provider)]
  return { endpoint: { baseURL, apiKey: apiKey.trim(), fetch: lateBoundFetch } }
}
