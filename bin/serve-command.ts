// `cachelab serve`: the mock providers on a real HTTP port (or a recording proxy to the real APIs),
// until interrupted. Binds loopback unless told otherwise; the log never holds keys. An unwritable log is
// a usage error before anything listens; a write that fails later is reported once, and serving goes on.

import { CachelabError } from '../harness/errors.ts'
import { LOOPBACK_ROUTES, startLoopback } from '../providers/mock/loopback.ts'
import { parse } from './args.ts'
import { openJsonlSink } from './jsonl-sink.ts'

export async function serveCommand(argv: string[], signal?: AbortSignal): Promise<number> {
  const { values } = parse(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    upstream: { type: 'string' },
    log: { type: 'string' },
  })
  const port = values.port === undefined ? 8787 : Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new CachelabError('usage', `--port must be 0-65535, not ${values.port}`)
  const upstream = values.upstream ?? 'sim'
  if (upstream !== 'sim' && upstream !== 'live')
    throw new CachelabError('usage', `--upstream must be sim or live, not ${upstream}`)
  const log =
    values.log === undefined
      ? undefined
      : openJsonlSink(values.log, {
          label: '--log',
          onError: (message) => process.stderr.write(`cachelab serve: ${message}\n`),
        })
  const server = await startLoopback({
    ...(values.host !== undefined ? { host: values.host } : {}),
    port,
    upstream,
    ...(log !== undefined ? { log: (record) => log.append(record) } : {}),
  })
  process.stdout.write(
    [
      `cachelab serve (${upstream}) listening on ${server.url}`,
      `  OPENAI_BASE_URL=${server.baseURLs.openai}`,
      `  ANTHROPIC_BASE_URL=${server.baseURLs.anthropic}`,
      `  DEEPSEEK_BASE_URL=${server.baseURLs.deepseek}`,
      `  (path prefixes: ${LOOPBACK_ROUTES.map(({ prefix }) => prefix).join(', ')}; the README gives each client's setting)`,
      '',
    ].join('\n'),
  )
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      resolve()
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    signal?.addEventListener('abort', stop, { once: true })
  })
  await server.close()
  if (log !== undefined && log.lost > 0)
    process.stderr.write(`cachelab serve: ${log.lost} log records could not be written to ${log.path}\n`)
  return 0
}
