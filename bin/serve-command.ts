// `cachelab serve`: the mock providers on a real HTTP port (or a recording proxy to the real APIs),
// until interrupted. Binds loopback unless told otherwise; the log never holds keys. An unwritable log or
// a bad fault schedule is an input error before anything listens; a log write that fails later is
// reported once, and serving goes on.

import { CachelabError } from '../harness/errors.ts'
import { readFaultSchedule } from '../providers/mock/fault-spec.ts'
import { DEFAULT_SHUTDOWN_GRACE_MS, type LoopbackServer, startLoopback } from '../providers/mock/loopback.ts'
import { readReplies } from '../providers/mock/reply-file.ts'
import { captureStamp, selfUpstream, serveBanner, serveSettings } from '../providers/mock/serve-settings.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { ReplaySource } from '../reports/observed/capture/replay.ts'
import { CaptureWriter, openCapture } from '../reports/observed/capture/store.ts'
import { CaptureTracker } from '../reports/observed/capture/tracker.ts'
import { parse } from './args.ts'
import { SERVE_FLAGS } from './commands.ts'
import { openJsonlSink } from './jsonl-sink.ts'

/** `serve` inside another command (`cachelab record`): where its banner goes and when it stops. */
export interface ServeEmbedding {
  /** Writes the banner (stdout when absent). */
  print?: (text: string) => void
  /** Runs once serve listens; serve stops when it settles, instead of at SIGINT or SIGTERM. */
  hold: (server: LoopbackServer, capture: CaptureWriter | undefined) => Promise<void>
}

export async function serveCommand(
  argv: string[],
  signal?: AbortSignal,
  embedding?: ServeEmbedding,
): Promise<number> {
  const { values } = parse(argv, SERVE_FLAGS)
  const settings = serveSettings(values, process.env)
  const { port, host, upstream, memory, liveBaseURLs } = settings
  const replay = values.replay === undefined ? undefined : new ReplaySource(openCapture(values.replay))
  const faults = values.faults === undefined ? undefined : readFaultSchedule(values.faults)
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
    // What changed at each break is kept in a capture unless it is to keep no text; nothing else needs it.
    keepChanges: values.record !== undefined && values['record-no-text'] !== true,
    // A live capture keeps the model's answers, so `serve --replay` can serve them again.
    keepAnswers: upstream === 'live',
    // What an unmarked Anthropic or Bedrock request would have read marked: a cache of its own, in a
    // quarter of the simulators' room (only such requests fill it).
    shadow: new CacheSimulators({
      counter: memory.counter,
      memoryBytes: Math.floor(memory.simulatorBytes / 4),
    }),
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
    fingerprintBytes: memory.fingerprintBytes,
    memoryBudgetBytes: memory.budgetBytes,
    maxBodyBytes: settings.maxBodyBytes,
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
  if (settings.exposed)
    process.stderr.write(
      `cachelab serve: warning: listening on ${host} (--expose): reachable from other machines, with no authentication${upstream === 'live' ? '; every caller is relayed to the provider APIs' : ''}\n`,
    )
  const print = embedding?.print ?? ((text: string) => process.stdout.write(text))
  print(
    serveBanner(server, settings, {
      lenient: values.lenient === true,
      ...(writer !== undefined ? { recordingTo: writer.dir } : {}),
      ...(replay !== undefined && values.replay !== undefined
        ? { replay: { file: values.replay, sessions: replay.recorded.length } }
        : {}),
      ...(faults !== undefined && values.faults !== undefined
        ? { faults: { file: values.faults, rules: faults.length } }
        : {}),
      ...(replies !== undefined && values.replies !== undefined
        ? { replies: { file: values.replies, rules: replies.rules.length } }
        : {}),
    }),
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
