// `npm run test:keyed:loopback`: the keyed suite end to end against `cachelab serve` on 127.0.0.1,
// every provider's base URL pointed at it with sentinel keys, so the keyed path is proven where the
// real APIs are unreachable. The server logs (`--log`) and records (`--record`, with bodies) as serve
// does; afterwards the capture is reported, and every output — log, capture, report, the suite's CSVs,
// its terminal output, the server's answers to keys sent in query strings — is scanned for the keys:
// one found is exit 1. Otherwise exits with the suite's code. `--perturbed` serves other cache rules
// than the catalog's (scenarios/keyed.ts `perturbedCatalog`): the suite must then fail, naming each step.

import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compatibleProviders } from '../providers/compatible.ts'
import { startLoopback } from '../providers/mock/loopback.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { CaptureWriter } from '../reports/observed/capture/store.ts'
import { CaptureTracker } from '../reports/observed/capture/tracker.ts'
import { perturbedCatalog } from '../scenarios/keyed.ts'
import { writeRunFiles } from '../scenarios/run-files.ts'
import { openJsonlSink } from './jsonl-sink.ts'
import { reportCapture } from './report.ts'
import { findSentinels, keyInQueryRequests } from './sentinel-scan.ts'

// Sentinels, not `sk-…` shapes: a leak must be caught by the scan, not masked by a shape rule.
const sentinel = (vendor: string) => `cachelab-sentinel-${vendor}-${randomBytes(8).toString('hex')}`
const KEYS = {
  anthropic: sentinel('anthropic'),
  openai: sentinel('openai'),
  deepseek: sentinel('deepseek'),
  gemini: sentinel('gemini'),
  bedrock: sentinel('bedrock'),
}
/** Each OpenAI-compatible provider of the catalog, under its own key variable. */
const COMPATIBLE_KEYS: Record<string, string> = Object.fromEntries(
  compatibleProviders().map((provider) => [provider.id, sentinel(provider.id)]),
)

const perturbed = process.argv.includes('--perturbed')
const vitestArguments = process.argv.slice(2).filter((argument) => argument !== '--perturbed')
const work = mkdtempSync(join(tmpdir(), 'cachelab-keyed-loopback-'))
const complain = (error: Error | string) =>
  process.stderr.write(`keyed-loopback: ${typeof error === 'string' ? error : error.message}\n`)
const log = openJsonlSink(join(work, 'serve.jsonl'), { label: '--log', onError: complain })
const captureDir = join(work, 'capture')
const writer = CaptureWriter.open(
  captureDir,
  { id: 'capture-keyed-loopback', started: new Date().toISOString(), upstream: 'sim', bodies: true },
  complain,
)
const linearizer = new CacheSimulators()
const server = await startLoopback({
  upstream: 'sim',
  host: '127.0.0.1',
  port: 0,
  log: (record) => log.append(record),
  capture: new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    keepBodies: true,
    keepAnswers: false,
    sink: (exchange) => writer.write(exchange),
  }),
  ...(perturbed ? { simulator: { models: perturbedCatalog() } } : {}),
})
process.stdout.write(
  perturbed
    ? `cachelab serve (sim, perturbed rules: the suite should fail) on ${server.url} for the keyed suite\n`
    : `cachelab serve (sim) on ${server.url} for the keyed suite; outputs in ${work}\n`,
)
// Keys where a client may put them besides the headers: in query strings, on unknown paths.
const answers: Record<string, string> = {}
for (const [index, request] of keyInQueryRequests(server.baseURLs, KEYS.openai).entries()) {
  const response = await fetch(request)
  answers[`answer ${index + 1} (${response.status})`] = await response.text()
}
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANTHROPIC_API_KEY: KEYS.anthropic,
  OPENAI_API_KEY: KEYS.openai,
  DEEPSEEK_API_KEY: KEYS.deepseek,
  GEMINI_API_KEY: KEYS.gemini,
  AWS_BEARER_TOKEN_BEDROCK: KEYS.bedrock,
  ANTHROPIC_BASE_URL: server.baseURLs.anthropic,
  OPENAI_BASE_URL: server.baseURLs.openai,
  DEEPSEEK_BASE_URL: server.baseURLs.deepseek,
  GEMINI_BASE_URL: server.baseURLs.gemini,
  BEDROCK_BASE_URL: server.baseURLs.bedrock,
  ...Object.fromEntries(
    compatibleProviders().flatMap((provider) => [
      [provider.keyVariable, COMPATIBLE_KEYS[provider.id] ?? ''],
      [provider.baseURLVariable, server.baseURL(provider.id)],
    ]),
  ),
  CACHELAB_REQUIRE_KEYS: '1',
  CACHELAB_KEYED_OUT: join(work, 'keyed'),
  // Against the simulator itself every prediction must hold exactly.
  CACHELAB_KEYED_TOLERANCE_TOKENS: '0',
  CACHELAB_KEYED_TOLERANCE_RATIO: '0',
  // The provider's cache diagnostics are the simulator's too: every reason must agree with cachelab's cause.
  CACHELAB_KEYED_DIAGNOSIS_EXACT: '1',
}
const child = spawn('npx', ['vitest', 'run', '--project', 'keyed', ...vitestArguments], {
  env,
  stdio: ['inherit', 'pipe', 'pipe'],
})
let output = ''
child.stdout.on('data', (chunk: Buffer) => {
  output += chunk.toString('utf8')
  process.stdout.write(chunk)
})
child.stderr.on('data', (chunk: Buffer) => {
  output += chunk.toString('utf8')
  process.stderr.write(chunk)
})
const code = await new Promise<number>((resolve) => child.on('close', (exit) => resolve(exit ?? 1)))
await server.close()
const report = reportCapture(captureDir)
writeRunFiles(join(work, 'report'), {
  runId: report.runId,
  rows: report.rows,
  scenarios: [],
  writer: 'report',
})
const leaks = findSentinels([work], { 'the suite output': output, ...answers }, [
  ...Object.values(KEYS),
  ...Object.values(COMPATIBLE_KEYS),
])
if (leaks.length > 0) {
  process.stderr.write(
    `keyed-loopback: a key reached an output:\n${leaks.map((leak) => `  ${leak}`).join('\n')}\n`,
  )
  process.exit(1)
}
process.stdout.write(
  `keyed-loopback: no sentinel key in the log, the capture (${report.rows.length} requests), its report, the suite's CSVs or output\n`,
)
process.exit(code)
