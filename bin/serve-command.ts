// `cachelab serve`: the mock providers on a real HTTP port (or a recording proxy to the real APIs),
// until interrupted. Binds loopback unless told otherwise; the log never holds keys. An unwritable log or
// a bad fault schedule is an input error before anything listens; a log write that fails later is
// reported once, and serving goes on.

import { readFileSync } from 'node:fs'
import { config as loadDotenv } from 'dotenv'
import { CachelabError } from '../harness/errors.ts'
import { ReplaySource } from '../providers/capture/replay.ts'
import { CaptureWriter, openCapture } from '../providers/capture/store.ts'
import { CaptureTracker } from '../providers/capture/tracker.ts'
import type { BuiltInVendor } from '../providers/catalog.ts'
import { compatibleProviders } from '../providers/compatible.ts'
import { DEFAULT_BASE_URLS, ENV_NAMES } from '../providers/endpoints.ts'
import { CLOCK_PATH } from '../providers/mock/control.ts'
import { parseFaultSchedule } from '../providers/mock/fault-spec.ts'
import type { FaultRule } from '../providers/mock/faults.ts'
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_SHUTDOWN_GRACE_MS,
  type LoopbackServer,
  loopbackRoutes,
  startLoopback,
} from '../providers/mock/loopback.ts'
import { DEFAULT_MEMORY_BUDGET_MB, planMemory } from '../providers/mock/memory-budget.ts'
import { readReplies } from '../providers/mock/reply-file.ts'
import { isLoopbackHost, redactText } from '../providers/mock/serve-safety.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { parse } from './args.ts'
import { openJsonlSink } from './jsonl-sink.ts'

/** `serve` inside another command (`cachelab record`): where its banner goes and when it stops. */
export interface ServeEmbedding {
  /** Writes the banner (stdout when absent). */
  print?: (text: string) => void
  /** Runs once serve listens; serve stops when it settles, instead of at SIGINT or SIGTERM. */
  hold: (server: LoopbackServer, capture: CaptureWriter | undefined) => Promise<void>
}

/** serve's flags. */
export const SERVE_FLAGS = {
  port: { type: 'string' },
  host: { type: 'string' },
  upstream: { type: 'string' },
  log: { type: 'string' },
  record: { type: 'string' },
  'record-bodies': { type: 'boolean' },
  replay: { type: 'string' },
  faults: { type: 'string' },
  lenient: { type: 'boolean' },
  replies: { type: 'string' },
  expose: { type: 'boolean' },
  'memory-budget': { type: 'string' },
  'max-body': { type: 'string' },
} as const

export async function serveCommand(
  argv: string[],
  signal?: AbortSignal,
  embedding?: ServeEmbedding,
): Promise<number> {
  const { values } = parse(argv, SERVE_FLAGS)
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
  const memory = planMemory(budgetMb)
  const maxBody = values['max-body'] === undefined ? DEFAULT_MAX_BODY_BYTES : byteSize(values['max-body'])
  if (maxBody === undefined)
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
  const liveBaseURLs = upstream === 'live' ? liveUpstreams(process.env) : undefined
  if (values['record-bodies'] === true && values.record === undefined)
    throw new CachelabError('usage', '--record-bodies needs --record DIR')
  if (values.replay !== undefined && upstream !== 'sim')
    throw new CachelabError(
      'usage',
      '--replay answers from a recording on the simulator: drop --upstream live',
    )
  const replay = values.replay === undefined ? undefined : new ReplaySource(openCapture(values.replay))
  if (values.faults !== undefined && upstream === 'live')
    throw new CachelabError('usage', '--faults needs --upstream sim: the real providers fail on their own')
  const faults = values.faults === undefined ? undefined : readFaultSchedule(values.faults)
  if (values.lenient === true && upstream !== 'sim')
    throw new CachelabError('usage', '--lenient applies to the simulated upstream (--upstream sim)')
  if (values.replies !== undefined && upstream !== 'sim')
    throw new CachelabError('usage', '--replies scripts the simulated model: it needs --upstream sim')
  // Read and validated before anything listens: a bad rule is exit 2 naming its line.
  const replies = values.replies === undefined ? undefined : readReplies(values.replies)
  const log =
    values.log === undefined
      ? undefined
      : openJsonlSink(values.log, {
          label: '--log',
          onError: (message) => process.stderr.write(`cachelab serve: ${message}\n`),
        })
  const started = new Date()
  const writer =
    values.record === undefined
      ? undefined
      : CaptureWriter.open(
          values.record,
          {
            id: `capture-${captureStamp(started)}`,
            started: started.toISOString(),
            upstream,
            bodies: values['record-bodies'] === true,
          },
          (error) =>
            process.stderr.write(
              `cachelab serve: cannot write the capture: ${error.message} (still serving)\n`,
            ),
        )
  const linearizer = new CacheSimulators({ counter: memory.counter })
  const capture = new CaptureTracker({
    memoryBytes: memory.trackerBytes,
    linearize: (api, body) => linearizer.linearize(api, body),
    keepBodies: values['record-bodies'] === true,
    // A live capture keeps the model's answers, so `serve --replay` can serve them again.
    keepAnswers: upstream === 'live',
    ...(writer !== undefined ? { sink: (exchange) => writer.write(exchange) } : {}),
  })
  // A start that fails (the port is busy) leaves no capture behind to refuse the next try.
  const server = await startLoopback({
    capture,
    ...(replay !== undefined
      ? {
          replay,
          onReplayMismatch: (message: string) =>
            process.stderr.write(`cachelab serve: replay refused a request: ${message}\n`),
        }
      : {}),
    host,
    port,
    ...(liveBaseURLs !== undefined ? { liveBaseURLs } : {}),
    upstream,
    simulator: { counter: memory.counter, memoryBytes: memory.simulatorBytes },
    memoryBudgetBytes: memory.budgetBytes,
    maxBodyBytes: maxBody,
    ...(values.lenient === true ? { lenient: true } : {}),
    ...(replies !== undefined ? { replies } : {}),
    ...(log !== undefined ? { log: (record) => log.append(record) } : {}),
    ...(faults !== undefined ? { faults } : {}),
    onStandIn: (model, standIn) =>
      process.stderr.write(
        `cachelab serve: ${model} is not in the catalog: simulated as ${standIn} (its cache rules and prices)\n`,
      ),
  }).catch((error: unknown) => {
    writer?.discard()
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE')
      throw new CachelabError(
        'usage',
        `port ${port} on ${host} is in use: choose another --port (0: any free one)`,
      )
    if (code === 'EADDRNOTAVAIL')
      throw new CachelabError('usage', `--host ${host} is not an address of this machine`)
    throw error
  })
  const loop = liveBaseURLs === undefined ? undefined : selfUpstream(liveBaseURLs, new URL(server.url).port)
  if (loop !== undefined) {
    await server.close()
    writer?.discard()
    throw new CachelabError(
      'usage',
      `${loop} points at this server: --upstream live would proxy to itself (unset it in serve's environment, or point it at the provider)`,
    )
  }
  if (exposed)
    process.stderr.write(
      `cachelab serve: warning: listening on ${host} (--expose): reachable from other machines, with no authentication${upstream === 'live' ? '; every caller is relayed to the provider APIs' : ''}\n`,
    )
  const print = embedding?.print ?? ((text: string) => process.stdout.write(text))
  print(
    [
      `cachelab serve (${upstream}${values.lenient === true ? ', lenient' : ''}) listening on ${server.url}`,
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
      ...(liveBaseURLs !== undefined
        ? [
            `  upstream: ${VENDORS.map((vendor) => `${vendor} ${redactText(liveBaseURLs[vendor])}`).join(', ')}`,
          ]
        : []),
      ...(writer !== undefined ? [`  recording to ${writer.dir} (cachelab report ${writer.dir})`] : []),
      ...(replay !== undefined
        ? [
            `  replaying ${values.replay} (${replay.recorded.length} sessions): recorded answers, simulated usage`,
          ]
        : []),
      ...(faults !== undefined ? [`  fault schedule: ${faults.length} rules from ${values.faults}`] : []),
      ...(upstream === 'sim'
        ? [`  virtual clock: GET ${server.url}${CLOCK_PATH}, POST {"advance": seconds} to move it on`]
        : []),
      ...(replies !== undefined
        ? [
            `  answering from ${values.replies} (${replies.rules.length} ${replies.rules.length === 1 ? 'rule' : 'rules'})`,
          ]
        : []),
      '',
    ].join('\n'),
  )
  try {
    await (embedding === undefined ? untilStopped(signal) : embedding.hold(server, writer))
  } finally {
    // Graceful: requests in flight finish and are recorded and logged (both are written as each request
    // ends, so nothing is left to flush once they have); new ones are refused meanwhile. One still running
    // after the grace period is cut, and recorded and logged as cut by shutdown before close resolves.
    const inFlight = server.health().requests.inFlight
    if (inFlight > 0)
      process.stderr.write(
        `cachelab serve: finishing ${inFlight} requests in flight before stopping (up to ${DEFAULT_SHUTDOWN_GRACE_MS / 1000} s; then each is cut and recorded as cut by shutdown)\n`,
      )
    await server.close()
    if (log !== undefined && log.lost > 0)
      process.stderr.write(`cachelab serve: ${log.lost} log records could not be written to ${log.path}\n`)
  }
  return 0
}

/** Resolves at SIGINT, SIGTERM or the abort of `signal`. */
function untilStopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      resolve()
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    signal?.addEventListener('abort', stop, { once: true })
  })
}

const VENDORS: readonly BuiltInVendor[] = ['openai', 'anthropic', 'deepseek', 'gemini']

/**
 * `--upstream live`'s provider base URLs: `*_BASE_URL` from the environment or `.env` (a staging
 * upstream), else the real APIs. A value that is not an http(s) URL is a usage error naming the variable.
 */
export function liveUpstreams(processEnv: NodeJS.ProcessEnv): Record<BuiltInVendor, string> {
  const env: Record<string, string | undefined> = { ...processEnv }
  loadDotenv({ processEnv: env as Record<string, string>, quiet: true })
  const urls = { ...DEFAULT_BASE_URLS }
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

/** The rules of a `--faults` file, checked; an unreadable or invalid file is an input error (exit 2). */
function readFaultSchedule(file: string): FaultRule[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message
    throw new CachelabError('input', `cannot read --faults ${file}: ${reason}`)
  }
  return parseFaultSchedule(text, `--faults ${file}`)
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
function captureStamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
}
