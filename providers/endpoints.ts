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
  /** AWS Bedrock: the region, and an access key pair that signs with SigV4 instead of `apiKey` as a bearer key. */
  aws?: { region?: string; accessKeyId?: string; secretAccessKey?: string; sessionToken?: string }
}

/** The real APIs' base URLs, as the SDKs expect them. */
export const DEFAULT_BASE_URLS: Readonly<Record<BuiltInVendor, string>> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
  deepseek: 'https://api.deepseek.com',
  bedrock: 'https://bedrock-runtime.us-east-1.amazonaws.com',
  gemini: 'https://generativelanguage.googleapis.com',
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
  bedrock: { key: 'AWS_BEARER_TOKEN_BEDROCK', baseURL: 'BEDROCK_BASE_URL', model: 'CACHELAB_BEDROCK_MODEL' },
  gemini: { key: 'GEMINI_API_KEY', baseURL: 'GEMINI_BASE_URL', model: 'CACHELAB_GEMINI_MODEL' },
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
  if (provider === 'bedrock') return liveBedrockEndpoint(env)
  const names = envNames(vendorOf(provider))
  const apiKey = env[names.key]
  if (apiKey === undefined || apiKey.trim() === '') return { missing: names.key }
  const baseURL = env[names.baseURL]?.trim() || defaultBaseURL(vendorOf(provider))
  return { endpoint: { baseURL, apiKey: apiKey.trim(), fetch: lateBoundFetch } }
}

/**
 * The live Bedrock endpoint: a Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`, sent as a bearer token) or an
 * access key pair (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, optional `AWS_SESSION_TOKEN`, SigV4), in
 * `AWS_REGION` (default us-east-1); `BEDROCK_BASE_URL` overrides the regional endpoint.
 */
function liveBedrockEndpoint(
  env: Readonly<Record<string, string | undefined>>,
): { endpoint: Endpoint } | { missing: string } {
  const value = (name: string) => {
    const text = env[name]?.trim()
    return text === undefined || text === '' ? undefined : text
  }
  const region = value('AWS_REGION') ?? value('AWS_DEFAULT_REGION') ?? 'us-east-1'
  const baseURL = value(ENV_NAMES.bedrock.baseURL) ?? `https://bedrock-runtime.${region}.amazonaws.com`
  const token = value(ENV_NAMES.bedrock.key)
  const accessKeyId = value('AWS_ACCESS_KEY_ID')
  const secretAccessKey = value('AWS_SECRET_ACCESS_KEY')
  const sessionToken = value('AWS_SESSION_TOKEN')
  if (token !== undefined)
    return { endpoint: { baseURL, apiKey: token, fetch: lateBoundFetch, aws: { region } } }
  if (accessKeyId === undefined || secretAccessKey === undefined) return { missing: ENV_NAMES.bedrock.key }
  return {
    endpoint: {
      baseURL,
      apiKey: '',
      fetch: lateBoundFetch,
      aws: { region, accessKeyId, secretAccessKey, ...(sessionToken !== undefined ? { sessionToken } : {}) },
    },
  }
}
