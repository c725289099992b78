// What `cachelab serve`'s flags mean, checked before anything listens: the port, host and upstream, the
// memory and body limits, the live upstreams from the environment, and the banner a started server
// prints. Pure apart from reading `.env` for the live upstreams; the command in bin/ only wires it up.

import { config as loadDotenv } from 'dotenv'
import { CachelabError } from '../../harness/errors.ts'
import type { BuiltInVendor } from '../catalog.ts'
import { compatibleProviders } from '../compatible.ts'
import { DEFAULT_BASE_URLS, ENV_NAMES } from '../endpoints.ts'
import { CLOCK_PATH } from './control.ts'
import { DEFAULT_MAX_BODY_BYTES, type LoopbackServer } from './loopback.ts'
import { loopbackRoutes } from './loopback-routes.ts'
import { DEFAULT_MEMORY_BUDGET_MB, type MemoryPlan, planMemory } from './memory-budget.ts'
import { isLoopbackHost, redactText } from './serve-safety.ts'

/** serve's flags, as `parseArgs` gives them. */
export interface ServeFlagValues {
  port?: string
  host?: string
  upstream?: string
  record?: string
  'record-bodies'?: boolean
  'record-no-text'?: boolean
  replay?: string
  faults?: string
  lenient?: boolean
  replies?: string
  expose?: boolean
  'memory-budget'?: string
  'max-body'?: string
}

/** The checked meaning of serve's flags. */
export interface ServeSettings {
  port: number
  host: string
  /** The host is not a loopback address (and `--expose` said so). */
  exposed: boolean
  upstream: 'sim' | 'live'
  memory: MemoryPlan
  maxBodyBytes: number
  /** `--upstream live`'s provider base URLs. */
  liveBaseURLs?: Record<BuiltInVendor, string>
}

/** Check serve's flags against each other; a contradiction or a malformed value is a usage error (exit 2). */
export function serveSettings(values: ServeFlagValues, env: NodeJS.ProcessEnv): ServeSettings {
  const port = values.port === undefined ? 8787 : Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new CachelabError('usage', `--port must be 0-65535, not ${values.port}`)
  const budgetMb =
    values['memory-budget'] === undefined ? DEFAULT_MEMORY_BUDGET_MB : Number(values['memory-budget'])
  if (!Number.isFinite(budgetMb) || budgetMb < 16)
    throw new CachelabError(
      'usage',
      `--memory-budget must be a number of MiB, 16 or more, not ${values['memory-budget']}`,
    )
  const maxBodyBytes =
    values['max-body'] === undefined ? DEFAULT_MAX_BODY_BYTES : byteSize(values['max-body'])
  if (maxBodyBytes === undefined)
    throw new CachelabError(
      'usage',
      `--max-body must be a size such as 32m, 512k or 1000000 (bytes), not ${values['max-body']}`,
    )
  const upstream = values.upstream ?? 'sim'
  if (upstream !== 'sim' && upstream !== 'live')
    throw new CachelabError('usage', `--upstream must be sim or live, not ${upstream}`)
  const host = values.host ?? '127.0.0.1'
  const exposed = !isLoopbackHost(host)
  // Beyond this machine the simulator is anyone's, and the live proxy an open relay with the callers' keys.
  if (exposed && values.expose !== true)
    throw new CachelabError(
      'usage',
      upstream === 'live'
        ? `--host ${host} with --upstream live would relay anyone who reaches it to the provider APIs: add --expose to mean it`
        : `--host ${host} listens beyond this machine (no authentication): add --expose to mean it, or use 127.0.0.1`,
    )
  const liveBaseURLs = upstream === 'live' ? liveUpstreams(env) : undefined
  if (values['record-bodies'] === true && values.record === undefined)
    throw new CachelabError('usage', '--record-bodies needs --record DIR')
  if (values['record-no-text'] === true && values.record === undefined)
    throw new CachelabError('usage', '--record-no-text needs --record DIR')
  if (values['record-no-text'] === true && values['record-bodies'] === true)
    throw new CachelabError(
      'usage',
      '--record-bodies keeps every body, --record-no-text no text at all: choose one',
    )
  if (values.replay !== undefined && upstream !== 'sim')
    throw new CachelabError(
      'usage',
      '--replay answers from a recording on the simulator: drop --upstream live',
    )
  if (values.faults !== undefined && upstream === 'live')
    throw new CachelabError('usage', '--faults needs --upstream sim: the real providers fail on their own')
  if (values.lenient === true && upstream !== 'sim')
    throw new CachelabError('usage', '--lenient applies to the simulated upstream (--upstream sim)')
  if (values.replies !== undefined && upstream !== 'sim')
    throw new CachelabError('usage', '--replies scripts the simulated model: it needs --upstream sim')
  return {
    port,
    host,
    exposed,
    upstream,
    memory: planMemory(budgetMb),
    maxBodyBytes,
    ...(liveBaseURLs !== undefined ? { liveBaseURLs } : {}),
  }
}

const VENDORS: readonly BuiltInVendor[] = ['openai', 'anthropic', 'deepseek', 'gemini', 'bedrock']

/**
 * `--upstream live`'s provider base URLs: `*_BASE_URL` from the environment or `.env` (a staging
 * upstream), else the real APIs. A value that is not an http(s) URL is a usage error naming the variable.
 */
export function liveUpstreams(processEnv: NodeJS.ProcessEnv): Record<BuiltInVendor, string> {
  const env: Record<string, string | undefined> = { ...processEnv }
  loadDotenv({ processEnv: env as Record<string, string>, quiet: true })
  // Bedrock's endpoint is regional, as a live run's is (providers/endpoints.ts).
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim()
  const urls = {
    ...DEFAULT_BASE_URLS,
    ...(region !== undefined && /^[a-z0-9-]+$/.test(region)
      ? { bedrock: `https://bedrock-runtime.${region}.amazonaws.com` }
      : {}),
  }
  for (const vendor of VENDORS) {
    const name = ENV_NAMES[vendor].baseURL
    const value = env[name]?.trim()
    if (value === undefined || value === '') continue
    let url: URL
    try {
      url = new URL(value)
    } catch {
      throw new CachelabError(
        'usage',
        `${name} must be an http(s) URL, not ${JSON.stringify(redactText(value))}`,
      )
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new CachelabError(
        'usage',
        `${name} must be an http(s) URL, not ${JSON.stringify(redactText(value))}`,
      )
    urls[vendor] = value.replace(/\/$/, '')
  }
  return urls
}

/**
 * The variable whose base URL is this server itself (a loopback host on its port), or undefined: a shell
 * that points its clients at `cachelab serve` would otherwise make the live proxy call itself forever.
 */
export function selfUpstream(
  urls: Readonly<Record<BuiltInVendor, string>>,
  port: string,
): string | undefined {
  for (const vendor of VENDORS) {
    const url = new URL(urls[vendor])
    const urlPort = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port
    if (urlPort === port && isLoopbackHost(url.hostname))
      return `${ENV_NAMES[vendor].baseURL}=${urls[vendor]}`
  }
  return undefined
}

/** Bytes of a size written as a number with an optional k, m or g (KiB, MiB, GiB); undefined if malformed. */
export function byteSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)([kmg]?)i?b?$/i.exec(text.trim())
  if (match === null) return undefined
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(match[2] ?? '').toLowerCase()] ?? 1
  const bytes = Math.floor(Number(match[1]) * unit)
  return bytes >= 1 ? bytes : undefined
}

/** `20261130-162300` from a date: a capture id that sorts by time. */
export function captureStamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
}

/** What a started serve does beside answering, for its banner. */
export interface ServeBannerExtras {
  lenient: boolean
  /** The capture folder being written. */
  recordingTo?: string
  replay?: { file: string; sessions: number }
  faults?: { file: string; rules: number }
  replies?: { file: string; rules: number }
}

/** The banner of a started serve: where it listens, each client's base URL, and what else it does. */
export function serveBanner(
  server: LoopbackServer,
  settings: ServeSettings,
  extras: ServeBannerExtras,
): string {
  const live = settings.liveBaseURLs
  return [
    `cachelab serve (${settings.upstream}${extras.lenient ? ', lenient' : ''}) listening on ${server.url}`,
    `  OPENAI_BASE_URL=${server.baseURLs.openai}`,
    `  ANTHROPIC_BASE_URL=${server.baseURLs.anthropic}`,
    `  DEEPSEEK_BASE_URL=${server.baseURLs.deepseek}`,
    `  GEMINI_BASE_URL=${server.baseURLs.gemini}`,
    `  BEDROCK_BASE_URL=${server.baseURLs.bedrock}`,
    `  compatible providers: ${compatibleProviders()
      .map((provider) => `${provider.baseURLVariable}=${server.baseURL(provider.id)}`)
      .join(' ')}`,
    `  (path prefixes: ${loopbackRoutes()
      .map(({ prefix }) => prefix)
      .join(', ')}; docs/serve.md gives each client's setting)`,
    ...(live !== undefined
      ? [`  upstream: ${VENDORS.map((vendor) => `${vendor} ${redactText(live[vendor])}`).join(', ')}`]
      : []),
    ...(extras.recordingTo !== undefined
      ? [`  recording to ${extras.recordingTo} (cachelab report ${extras.recordingTo})`]
      : []),
    ...(extras.replay !== undefined
      ? [
          `  replaying ${extras.replay.file} (${extras.replay.sessions} sessions): recorded answers, simulated usage`,
        ]
      : []),
    ...(extras.faults !== undefined
      ? [`  fault schedule: ${extras.faults.rules} rules from ${extras.faults.file}`]
      : []),
    ...(settings.upstream === 'sim'
      ? [`  virtual clock: GET ${server.url}${CLOCK_PATH}, POST {"advance": seconds} to move it on`]
      : []),
    ...(extras.replies !== undefined
      ? [
          `  answering from ${extras.replies.file} (${extras.replies.rules} ${extras.replies.rules === 1 ? 'rule' : 'rules'})`,
        ]
      : []),
    '',
  ].join('\n')
}
