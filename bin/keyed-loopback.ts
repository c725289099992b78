// `npm run test:keyed:loopback`: the keyed suite end to end against `cachelab serve` on 127.0.0.1,
// every provider's base URL pointed at it with placeholder keys, so the keyed path is proven where the
// real APIs are unreachable. Exits with the suite's code. `--perturbed` serves other cache rules than
// the catalog's (scenarios/keyed.ts `perturbedCatalog`): the suite must then fail, naming each step.

import { spawn } from 'node:child_process'
import { startLoopback } from '../providers/mock/loopback.ts'
import { perturbedCatalog } from '../scenarios/keyed.ts'

const PLACEHOLDER_KEY = 'cachelab-loopback-placeholder-key'

const perturbed = process.argv.includes('--perturbed')
const vitestArguments = process.argv.slice(2).filter((argument) => argument !== '--perturbed')
const server = await startLoopback({
  upstream: 'sim',
  host: '127.0.0.1',
  port: 0,
  ...(perturbed ? { simulator: { models: perturbedCatalog() } } : {}),
})
process.stdout.write(
  perturbed
    ? `cachelab serve (sim, perturbed rules: the suite should fail) on ${server.url} for the keyed suite\n`
    : `cachelab serve (sim) on ${server.url} for the keyed suite\n`,
)
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANTHROPIC_API_KEY: PLACEHOLDER_KEY,
  OPENAI_API_KEY: PLACEHOLDER_KEY,
  DEEPSEEK_API_KEY: PLACEHOLDER_KEY,
  ANTHROPIC_BASE_URL: server.baseURLs.anthropic,
  OPENAI_BASE_URL: server.baseURLs.openai,
  DEEPSEEK_BASE_URL: server.baseURLs.deepseek,
  CACHELAB_REQUIRE_KEYS: '1',
  // Against the simulator itself every prediction must hold exactly.
  CACHELAB_KEYED_TOLERANCE_TOKENS: '0',
  CACHELAB_KEYED_TOLERANCE_RATIO: '0',
}
const child = spawn('npx', ['vitest', 'run', '--project', 'keyed', ...vitestArguments], {
  env,
  stdio: 'inherit',
})
const code = await new Promise<number>((resolve) => child.on('exit', (exit) => resolve(exit ?? 1)))
await server.close()
process.exit(code)
