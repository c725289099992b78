// The loopback server's security edges, as pure functions: keys redacted from anything it writes, the
// headers and paths the live proxy passes on, and which hosts count as this machine only
// (notes/2026-11-30-serve-security.md).

import { compatibleProviders } from '../compatible.ts'

/** What a redacted value is replaced with. */
export const REDACTED = '[redacted]'

/**
 * Query parameter names that carry a credential: `key`, `api-key`, `api_key`, `x-goog-api-key`,
 * `access_token`, `token`, `secret`, `password`, `signature`, `sig`, `auth`, `credential`… (case-insensitive,
 * anywhere in the name: a redacted harmless parameter costs nothing, a missed key leaks it).
 */
const SECRET_PARAMETER = /key|token|secret|passw|signature|^sig$|auth|credential|session_id/i

/** Key shapes worth catching wherever they appear: OpenAI/Anthropic/DeepSeek `sk-…` keys, Google `AIza…` keys. */
const KEY_SHAPE = /\bsk-[A-Za-z0-9_-]{16,}|\bAIza[A-Za-z0-9_-]{30,}/g

/** A query pair inside a URL or a path: `?name=value` or `&name=value`. */
const QUERY_PAIR = /([?&;])([^=&;#\s"'<>]+)=([^&;#\s"'<>]*)/g

/**
 * Text with every credential that can hide in it replaced: secret-named query values in any URL or path,
 * `Bearer` tokens, URL user-info (`https://user:pass@host`), `sk-…` key shapes, and the given `secrets`
 * (the keys the process knows) verbatim.
 */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let clean = text
  for (const secret of secrets) if (secret.length >= 8) clean = clean.split(secret).join(REDACTED)
  return clean
    .replace(QUERY_PAIR, (whole, separator: string, name: string) =>
      SECRET_PARAMETER.test(safeDecode(name)) ? `${separator}${name}=${REDACTED}` : whole,
    )
    .replace(/\b(Bearer|Basic)\s+[^\s"',;]+/gi, `$1 ${REDACTED}`)
    .replace(/(\/\/)[^/@\s"'<>]+@/g, `$1${REDACTED}@`)
    .replace(KEY_SHAPE, REDACTED)
}

/** The headers that carry a caller's key. */
const KEY_HEADERS = ['authorization', 'x-api-key', 'x-goog-api-key', 'api-key'] as const

/**
 * The credentials a request carries — its key headers' values (a `Bearer` token without the word) and
 * secret-named query values — for redacting them verbatim from what is kept of its exchange.
 */
export function credentialsOf(headers: Headers, path: string): string[] {
  const found: string[] = []
  for (const name of KEY_HEADERS) {
    const value = headers.get(name)?.trim()
    if (value === undefined || value === '') continue
    found.push(value.replace(/^(Bearer|Basic)\s+/i, ''))
  }
  for (const match of path.matchAll(QUERY_PAIR))
    if (SECRET_PARAMETER.test(safeDecode(match[2] ?? '')) && (match[3] ?? '') !== '')
      found.push(safeDecode(match[3] ?? ''))
  return found.filter((secret) => secret.length >= 8)
}

/**
 * Body field names that hold a credential wherever they appear in a request body: what SDKs' passthrough
 * options and hand-written clients put there (`api_key`, `apiKey`, `extra_headers.Authorization`,
 * `x-api-key`, `access_token`, `client_secret`, `password`). Whole names only: `prompt_cache_key` and
 * `max_tokens` are not credentials.
 */
const SECRET_FIELD =
  /^(api[-_]?key|x-api-key|x-goog-api-key|access[-_]?token|auth[-_]?token|bearer[-_]?token|secret|client[-_]?secret|secret[-_]?access[-_]?key|session[-_]?token|password|authorization)$/i

/** How deep into a body `bodyCredentials` looks: passthrough options sit a level or two down. */
const SECRET_FIELD_DEPTH = 4

/**
 * The credentials a request body carries in credential-named fields (a `Bearer` token without the word),
 * for redacting them verbatim, as `credentialsOf` does for headers and query strings. Values of at least
 * 8 characters; the walk stays within the first levels and skips arrays (the conversation's content).
 */
export function bodyCredentials(body: unknown): string[] {
  const found: string[] = []
  const walk = (value: unknown, depth: number) => {
    if (depth > SECRET_FIELD_DEPTH || typeof value !== 'object' || value === null || Array.isArray(value))
      return
    for (const [name, field] of Object.entries(value)) {
      if (typeof field === 'string' && SECRET_FIELD.test(name)) {
        const secret = field.trim().replace(/^(Bearer|Basic)\s+/i, '')
        if (secret.length >= 8) found.push(secret)
      } else walk(field, depth + 1)
    }
  }
  walk(body, 0)
  return found
}

/** Environment variable names that hold a key: `*_API_KEY`, `AWS_ACCESS_KEY_ID`, `*_SECRET*`, `*_TOKEN*`. */
const SECRET_VARIABLE = /_KEY$|_KEY_ID$|SECRET|_TOKEN(_|$)|PASSWORD/

/**
 * The values of an environment's key variables (`OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`…), for
 * redacting verbatim from what cachelab prints of a command it was given (`cachelab record -- …`).
 */
export function environmentSecrets(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env)
    .filter(([name, value]) => SECRET_VARIABLE.test(name) && (value?.trim().length ?? 0) >= 8)
    .map(([, value]) => (value as string).trim())
}

/**
 * True when a value a client chose (a `prompt_cache_key`, a `metadata.user_id`) holds a credential by
 * any rule `redactText` knows, or one of `secrets` (the request's own keys): it must never become a file
 * name or a report label as it is.
 */
export function looksLikeSecret(value: string, secrets: readonly string[] = []): boolean {
  return redactText(value, secrets) !== value
}

/**
 * The request headers the live proxy passes to a provider: what its API reads (content negotiation,
 * credentials (every vendor's key header), the vendors' own `anthropic-*` / `openai-*` headers, the SDKs' `x-stainless-*`
 * telemetry, idempotency), and cachelab's own `x-cachelab-*` (a staging upstream may be another
 * `cachelab serve`, which reads them; a vendor ignores them). Never cookies, `forwarded` /
 * `x-forwarded-*` / `x-real-ip`: they would tell the provider about the caller's network, or let a
 * caller spoof it.
 */
export function isForwardedHeader(name: string): boolean {
  const lower = name.toLowerCase()
  return (
    FORWARDED_HEADERS.has(lower) ||
    lower.startsWith('anthropic-') ||
    lower.startsWith('openai-') ||
    lower.startsWith('x-stainless-') ||
    lower.startsWith('x-cachelab-') ||
    isCompatibleRoutingHeader(lower)
  )
}

/** A compatible provider's routing header (xAI's `x-grok-conv-id`): the provider needs it to find its cache. */
function isCompatibleRoutingHeader(name: string): boolean {
  return compatibleProviders().some(
    (provider) =>
      provider.cache.routing.kind === 'header' && provider.cache.routing.name.toLowerCase() === name,
  )
}

const FORWARDED_HEADERS: ReadonlySet<string> = new Set([
  'accept',
  'authorization',
  'content-type',
  'idempotency-key',
  'user-agent',
  // The vendors' key headers: Anthropic's, Gemini's, Azure OpenAI's.
  'x-api-key',
  'x-goog-api-key',
  'api-key',
  'x-goog-api-client',
])

/**
 * Why a request path is refused, or undefined when it is normalised: no `.` or `..` segment (also
 * percent-encoded), no backslash, no empty segment, no control characters. A proxy that let `URL`
 * resolve `/openai/v1/../../x` would send the caller's key wherever the path climbs to.
 */
export function pathProblem(path: string): string | undefined {
  const mark = path.search(/[?#]/)
  const pathname = mark === -1 ? path : path.slice(0, mark)
  if (!pathname.startsWith('/')) return 'the path must start with /'
  let decoded: string
  try {
    decoded = decodeURIComponent(pathname)
  } catch {
    return 'the path has a malformed percent-encoding'
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\\\u0000-\u001f\u007f]/.test(decoded)) return 'the path has a backslash or a control character'
  const segments = decoded.slice(1).split('/')
  if (segments.some((segment) => segment === '.' || segment === '..')) return 'the path has a . or .. segment'
  if (segments.slice(0, -1).some((segment) => segment === '')) return 'the path has an empty segment (//)'
  return undefined
}

/** True when `host` (as given to `--host`) binds this machine only: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  if (bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1') return true
  const v4 = bare.startsWith('::ffff:') ? bare.slice('::ffff:'.length) : bare
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '))
  } catch {
    return text
  }
}
