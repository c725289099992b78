// `npm run test:keyed:loopback`: the keyed suite end to end against `cachelab serve` on 127.0.0.1,
// every provider's base URL pointed at it with placeholder keys, so the keyed path is proven where the
// real APIs are unreachable. Exits with the suite's code.

import { spawn } from 'node:child_process'
import { startLoopback } from '../providers/mock/loopback.ts'

const PLACEHOLDER_KEY = 'cachelab-loopback-placeholder-key'

const server = await startLoopback({ upstream: 'sim', host: '127.0.0.1', port: 0 })
process.stdout.write(`cachelab serve (sim) on ${server.url} for the keyed suite\n`)
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANTHROPIC_API_KEY: PLACEHOLDER_KEY,
  OPENAI_API_KEY: PLACEHOLDER_KEY,
  DEEPSEEK_API_KEY: PLACEHOLDER_KEY,
  ANTHROPIC_BASE_URL: server.baseURLs.anthropic,
  OPENAI_BASE_URL: server.baseURLs.openai,
  DEEPSEEK_BASE_URL: server.baseURLs.deepseek,
  CACHELAB_REQUIRE_KEYS: '1',
  CACHELAB_KEYED_EXACT_PREDICTIONS: '1',
}
const child = spawn('npx', ['vitest', 'run', '--project', 'keyed', ...process.argv.slice(2)], {
  env,
  stdio: 'inherit',
})
const code = await new Promise<number>((resolve) => child.on('exit', (exit) => resolve(exit ?? 1)))
await server.close()
process.exit(code)
