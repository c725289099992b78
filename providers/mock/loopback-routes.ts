// Where the loopback server answers: each vendor's path prefix (several for the clients that disagree on
// who appends the version), a request path's vendor, the vendor's API root the mock handlers live under,
// and what a 404 says would work. Pure; the compatible providers' routes follow the catalog.

import type { HttpHandler } from 'msw'
import { type BuiltInVendor, isBuiltInVendor, type Vendor } from '../catalog.ts'
import { compatibleProvider, compatibleProviders, speaksMessages } from '../compatible.ts'
import { DEFAULT_BASE_URLS, defaultBaseURL } from '../endpoints.ts'

/** The base URL path of each vendor on the loopback server; SDK base URLs are `http://host:port` + these. */
export const LOOPBACK_PREFIXES: Readonly<Record<BuiltInVendor, string>> = {
  openai: '/openai/v1',
  anthropic: '/anthropic',
  deepseek: '/deepseek',
  bedrock: '/bedrock',
  gemini: '/gemini',
}

/** A path prefix the loopback server accepts, and the vendor whose API root it stands for. */
export interface LoopbackRoute {
  prefix: string
  vendor: Vendor
}

/**
 * Every accepted prefix, longest first. Each stands for the vendor's API root (where `/messages`,
 * `/chat/completions`, `/responses`, `/models` live), so clients that disagree on who appends the
 * version all work: Anthropic's SDK posts `${base}/v1/messages`, the AI SDK `${base}/messages`, and
 * DeepSeek's own API answers with and without `/v1`. OpenAI's API has no unversioned paths, so neither
 * does its prefix (notes/2026-11-30-serve-base-urls.md).
 */
export const LOOPBACK_ROUTES: readonly LoopbackRoute[] = [
  { prefix: '/anthropic/v1', vendor: 'anthropic' },
  { prefix: '/anthropic', vendor: 'anthropic' },
  { prefix: '/openai/v1', vendor: 'openai' },
  { prefix: '/deepseek/v1', vendor: 'deepseek' },
  { prefix: '/deepseek', vendor: 'deepseek' },
  { prefix: '/bedrock', vendor: 'bedrock' },
  { prefix: '/gemini', vendor: 'gemini' },
]

/**
 * A vendor's base URL path on the loopback server: a compatible provider's is `/<id>/v1`, as OpenAI's; an
 * Anthropic-compatible one's `/<id>`, as Anthropic's (its SDK appends `/v1`).
 */
export function loopbackPrefix(vendor: Vendor): string {
  if (isBuiltInVendor(vendor)) return LOOPBACK_PREFIXES[vendor]
  return speaksMessages(compatibleProvider(vendor)) ? `/${vendor}` : `/${vendor}/v1`
}

/** Whether a vendor's API is Anthropic's Messages (Anthropic, or an Anthropic-compatible provider). */
function anthropicShaped(vendor: Vendor): boolean {
  return vendor === 'anthropic' || (!isBuiltInVendor(vendor) && speaksMessages(compatibleProvider(vendor)))
}

/** The routes of the compatible providers they were made from (every request looks its route up). */
let routesMade: { providers: readonly unknown[]; routes: readonly LoopbackRoute[] } | undefined

/** Every accepted prefix: the built-in vendors', then each compatible provider's (the catalog's, user files included). */
export function loopbackRoutes(): readonly LoopbackRoute[] {
  const providers = compatibleProviders()
  if (routesMade?.providers !== providers) routesMade = { providers, routes: Object.freeze(makeRoutes()) }
  return routesMade.routes
}

function makeRoutes(): LoopbackRoute[] {
  return [
    ...LOOPBACK_ROUTES,
    // An Anthropic-compatible provider is reached with and without /v1, as Anthropic's prefix is.
    ...compatibleProviders().flatMap((provider) =>
      speaksMessages(provider)
        ? [
            { prefix: `/${provider.id}/v1`, vendor: provider.id },
            { prefix: `/${provider.id}`, vendor: provider.id },
          ]
        : [{ prefix: loopbackPrefix(provider.id), vendor: provider.id }],
    ),
  ]
}

/** The vendor of a request path and the rest of the path (query included) below its prefix. */
export function routeOf(path: string): { vendor: Vendor; rest: string } | undefined {
  for (const { prefix, vendor } of loopbackRoutes()) {
    if (path.startsWith(`${prefix}/`)) return { vendor, rest: path.slice(prefix.length) }
  }
  return undefined
}

/**
 * The handlers that can answer a URL under `root`: MSW parses a request against every handler it tries
 * until one matches, so a request is offered only those whose literal path starts at its root (a handler
 * whose path is not a plain string is always offered).
 */
export function underRoot(handlers: readonly HttpHandler[], root: string): HttpHandler[] {
  return handlers.filter(({ info }) => typeof info.path !== 'string' || info.path.startsWith(`${root}/`))
}

/** The vendor's API root under a base URL in the SDKs' convention (Anthropic's omits its /v1). */
export function apiRoot(vendor: Vendor, baseURLs: Readonly<Record<BuiltInVendor, string>>): string {
  const base = (isBuiltInVendor(vendor) ? baseURLs[vendor] : defaultBaseURL(vendor)).replace(/\/$/, '')
  return anthropicShaped(vendor) ? `${base}/v1` : base
}

export const acceptedPrefixes = () =>
  `cachelab serve answers under ${loopbackRoutes()
    .map(({ prefix }) => prefix)
    .join(', ')}`

/** What the simulator serves for a vendor, read off its handlers, for a 404 that says what would work. */
export function servedUnder(vendor: Vendor, handlers: readonly HttpHandler[]): string {
  const root = apiRoot(vendor, DEFAULT_BASE_URLS)
  // DeepSeek's handlers repeat under /v1, an alias of its root: list each endpoint once.
  const endpoints = handlers.flatMap(({ info }) => {
    const rest =
      typeof info.path === 'string' && info.path.startsWith(`${root}/`) ? info.path.slice(root.length) : ''
    return rest === '' || rest.startsWith('/v1/')
      ? []
      : [`${String(info.method)} ${rest.replace(/:(\w+)/g, '{$1}')}`]
  })
  const prefixes = loopbackRoutes()
    .filter((route) => route.vendor === vendor)
    .map(({ prefix }) => prefix)
  return `under ${prefixes.join(' and ')} the simulator serves ${endpoints.join(', ')}`
}
