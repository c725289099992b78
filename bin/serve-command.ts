// `cachelab serve`: the mock providers on a real HTTP port (or a recording proxy to the real APIs),
// until interrupted. Binds loopback unless told otherwise; the log never holds keys.

import { appendFileSync } from 'node:fs'
import { CachelabError } from '../harness/errors.ts'
import { CaptureWriter } from '../providers/capture/store.ts'
import { CaptureTracker } from '../providers/capture/tracker.ts'
import { LOOPBACK_PREFIXES, startLoopback } from '../providers/mock/loopback.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { parse } from './args.ts'

export async function serveCommand(argv: string[], signal?: AbortSignal): Promise<number> {
  const { values } = parse(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    upstream: { type: 'string' },
    log: { type: 'string' },
    record: { type: 'string' },
    'record-bodies': { type: 'boolean' },
  })
  const port = values.port === undefined ? 8787 : Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new CachelabError('usage', `--port must be 0-65535, not ${values.port}`)
  const upstream = values.upstream ?? 'sim'
  if (upstream !== 'sim' && upstream !== 'live')
    throw new CachelabError('usage', `--upstream must be sim or live, not ${upstream}`)
  const logFile = values.log
  if (values['record-bodies'] === true && values.record === undefined)
    throw new CachelabError('usage', '--record-bodies needs --record DIR')
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
  const linearizer = new CacheSimulators()
  const capture = new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    keepBodies: values['record-bodies'] === true,
    ...(writer !== undefined ? { sink: (exchange) => writer.write(exchange) } : {}),
  })
  const server = await startLoopback({
    capture,
    ...(values.host !== undefined ? { host: values.host } : {}),
    port,
    upstream,
    ...(logFile !== undefined
      ? { log: (record) => appendFileSync(logFile, `${JSON.stringify(record)}\n`) }
      : {}),
  })
  process.stdout.write(
    [
      `cachelab serve (${upstream}) listening on ${server.url}`,
      `  OPENAI_BASE_URL=${server.baseURLs.openai}`,
      `  ANTHROPIC_BASE_URL=${server.baseURLs.anthropic}`,
      `  DEEPSEEK_BASE_URL=${server.baseURLs.deepseek}`,
      `  (paths: ${Object.values(LOOPBACK_PREFIXES).join(', ')})`,
      ...(writer !== undefined ? [`  recording to ${writer.dir} (cachelab report ${writer.dir})`] : []),
      '',
    ].join('\n'),
  )
  await new Promise<void>((resolve) => {
    const stop = () => resolve()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    signal?.addEventListener('abort', stop, { once: true })
  })
  await server.close()
  return 0
}

/** `20261130-162300` from a date: a capture id that sorts by time. */
function captureStamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
}
