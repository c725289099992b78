// `cachelab serve`: the mock providers on a real HTTP port (or a recording proxy to the real APIs),
// until interrupted. Binds loopback unless told otherwise; the log never holds keys.

import { appendFileSync } from 'node:fs'
import { CachelabError } from '../harness/errors.ts'
import { LOOPBACK_PREFIXES, startLoopback } from '../providers/mock/loopback.ts'
import { parse } from './args.ts'

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
  const logFile = values.log
  const server = await startLoopback({
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
