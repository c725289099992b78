// Where each provider is reached and with which key: the real APIs (keys from the environment or
// .env), the in-process simulator (the real URLs, intercepted by MSW, with placeholder keys), or a
// loopback server. Keys never leave this module except inside an SDK client.

import type { ProviderId } from '../harness/types.ts'
import { type BuiltInVendor, isBuiltInVendor, type Vendor, vendorOf } from './catalog.ts'
import { compatibleProvider } from './compatible.ts'

/** An SDK client's target. */
export interface Endpoint {
  baseURL: string
  apiKey: string
  /** The fetch the SDK uses; defaults to a late-bound global fetch so MSW interception applies. */
  fetch?: typeof fetch
}

/** The real APIs' base URLs, as the SDKs expect them. */
export const DEFAULT_BASE_URLS: Readonly<Record<BuiltInVendor, string>> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
  deepseek: 'https://api.deepseek.com',
}

/** The environment variables of a vendor: its key, its base URL and the model the keyed suite uses. */
export interface EnvNames {
  key: string
  baseURL: string
  model: string
}

/** Environment variables of each built-in vendor (`envNames` covers every vendor). */
export const ENV_NAMES: Readonly<Record<BuiltInVendor, EnvNames>> = {
  anthropic: { key: 'ANTHROPIC_API_KEY', baseURL: 'ANTHROPIC_BASE_URL', model: 'CACHELAB_ANTHROPIC_MODEL' },
  openai: { key: 'OPENAI_API_KEY', baseURL: 'OPENAI_BASE_URL', model: 'CACHELAB_OPENAI_MODEL' },
  deepseek: { key: 'DEEPSEEK_API_KEY', baseURL: 'DEEPSEEK_BASE_URL', model: 'CACHELAB_DEEPSEEK_MODEL' },
}

/** A vendor's real base URL: the built-in table's, or the compatible provider's catalog entry. */
export function defaultBaseURL(vendor: Vendor): string {
  return isBuiltInVendor(vendor) ? DEFAULT_BASE_URLS[vendor] : compatibleProvider(vendor).baseURL
}

/** A vendor's environment variables (a compatible provider's model variable is `CACHELAB_<ID>_MODEL`). */
export function envNames(vendor: Vendor): EnvNames {
  if (isBuiltInVendor(vendor)) return ENV_NAMES[vendor]
  const provider = compatibleProvider(vendor)
  return {
    key: provider.keyVariable,
    baseURL: provider.baseURLVariable,
    model: `CACHELAB_${vendor.toUpperCase().replace(/-/g, '_')}_MODEL`,
  }
}

/** The key placeholder of simulated runs; the mock providers accept any key. */
export const SIMULATED_KEY = 'cachelab-simulated-key'

/** A fetch that looks up the global at call time (MSW patches the global after clients exist). */
export const lateBoundFetch: typeof fetch = (input, init) => globalThis.fetch(input, init)

/** The simulated endpoint of a provider: real URL, placeholder key. */
export function simulatedEndpoint(provider: ProviderId): Endpoint {
  return { baseURL: defaultBaseURL(vendorOf(provider)), apiKey: SIMULATED_KEY, fetch: lateBoundFetch }
}

/** The live endpoint of a provider from the environment, or the name of the missing key variable. */
export function liveEndpoint(
  provider: ProviderId,
  env: Readonly<Record<string, string | undefined>>,
): { endpoint: Endpoint } | { missing: string } {
  const names = envNames(vendorOf(provider))
  const apiKey = env[names.key]
  if (apiKey === undefined || apiKey.trim() === '') return { missing: names.key }
  const baseURL = env[names.baseURL]?.trim() || defaultBaseURL(vendorOf(provider))
  return { endpoint: { baseURL, apiKey: apiKey.trim(), fetch: lateBoundFetch } }
}
