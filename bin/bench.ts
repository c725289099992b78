// `npm run bench`: cachelab's benchmarks, run one after another: (a) one simulated step beside a bare
// SDK→MSW round trip, (b) the long-session replay at 250, 500 and 1,000 turns (near-linear), (c) its peak
// memory; `serve` at scale: (d) 3,000 live sessions sharing a prompt, (e) 20,000 sessions expiring in
// virtual time, (f) an 11 MB request beside small ones, on a fresh server and on the server (e) filled;
// (g) the whole matrix with the default jobs against in process (wall over CPU time, identical output);
// (h) serve's requests per second against a bare node server at 22k-token bodies, fresh and growing
// sessions. `npm run bench -- --matrix` runs (g) alone; `--only step,long-session,serve,matrix,serve-rate`
// runs the parts named,
// and `--provider ID[,ID]` limits (b) and (c) to those providers.

import { PROVIDER_IDS, type ProviderId } from '../harness/types.ts'
import {
  benchExpiry,
  benchLargeRequest,
  benchServeRate,
  benchSiblings,
  freshSessions,
  growingSessions,
  type LargeRequestFigures,
} from '../providers/mock/serve.bench.ts'
import { benchLongSession } from '../scenarios/long-session.bench.ts'
import { benchStep } from '../scenarios/step.bench.ts'
import { benchMatrix, type MatrixRunFigures } from './matrix.bench.ts'

const fixed = (value: number, digits = 2) => value.toFixed(digits)
const seconds = (milliseconds: number) => `${fixed(milliseconds / 1000, 1)} s`

/** The goals of (b): 1,000 turns within 2.2× of 500, late/early within 1.5× of the bare round trip's. */
const RATIO_GOAL = 2.2
const LATE_TO_EARLY_GOAL = 1.5

/** The goal of (h): serve answers at least half the requests per second a bare node server does. */
const SERVE_RATE_GOAL = 0.5

const PARTS = ['step', 'long-session', 'serve', 'matrix', 'serve-rate'] as const
const parts = selectedParts()
const providers = selectedProviders()

if (parts.has('step')) await benchOneStep()
if (parts.has('long-session')) await benchLongSessions()
if (parts.has('serve')) await benchServe()
if (parts.has('matrix')) await benchWholeMatrix()
if (parts.has('serve-rate')) await benchServeRates()

/** The value of `--NAME VALUE` or `--NAME=VALUE`, when given. */
function option(name: string): string | undefined {
  const argv = process.argv
  const inline = argv.find((argument) => argument.startsWith(`--${name}=`))
  if (inline !== undefined) return inline.slice(name.length + 3)
  const index = argv.indexOf(`--${name}`)
  return index < 0 ? undefined : argv[index + 1]
}

function fail(message: string): never {
  process.stderr.write(`cachelab bench: ${message}\n`)
  process.exit(2)
}

function selectedParts(): Set<string> {
  if (process.argv.includes('--matrix')) return new Set(['matrix'])
  const only = option('only')
  if (only === undefined) return new Set(PARTS)
  const names = only.split(',').filter((name) => name !== '')
  for (const name of names)
    if (!(PARTS as readonly string[]).includes(name))
      fail(`unknown part ${name} (parts: ${PARTS.join(', ')})`)
  return new Set(names)
}

function selectedProviders(): readonly ProviderId[] {
  const named = option('provider')
  if (named === undefined) return PROVIDER_IDS
  const ids = named.split(',').filter((id) => id !== '')
  for (const id of ids)
    if (!(PROVIDER_IDS as readonly string[]).includes(id))
      fail(`unknown provider ${id} (providers: ${PROVIDER_IDS.join(', ')})`)
  return ids as ProviderId[]
}

async function benchOneStep(): Promise<void> {
  const step = await benchStep()
  process.stdout.write(
    `${[
      '(a) one simulated step, end to end, at a ~' +
        `${step.promptTokens.toLocaleString('en-US')}-token prompt`,
      `    simulated step ${fixed(step.stepMs)} ms, bare SDK→MSW round trip ${fixed(step.bareMs)} ms: ratio ${fixed(step.ratio)}×`,
      '',
    ].join('\n')}\n`,
  )
}

async function benchLongSessions(): Promise<void> {
  process.stdout.write(
    '(b) long-session replay (median of 7; loop → adapter → simulator → rows, in process)\n',
  )
  let worst = 0
  let missed = 0
  for (const provider of providers) {
    const figures = await benchLongSession(provider)
    worst = Math.max(worst, figures.ratio1000to500)
    const lateGoal = LATE_TO_EARLY_GOAL * figures.bareLateToEarly
    const holds = figures.ratio1000to500 <= RATIO_GOAL && figures.lateToEarlyRequestCost <= lateGoal
    if (!holds) missed += 1
    process.stdout.write(
      `    ${provider.padEnd(17)} 250: ${fixed(figures.medianMs[250] ?? 0, 0)} ms  500: ${fixed(figures.medianMs[500] ?? 0, 0)} ms  ` +
        `1,000: ${fixed(figures.medianMs[1000] ?? 0, 0)} ms  ratios 500/250 ${fixed(figures.ratio500to250)}×, ` +
        `1,000/500 ${fixed(figures.ratio1000to500)}× (goal ≤ ${fixed(RATIO_GOAL, 1)}×)\n` +
        `    ${''.padEnd(17)} late/early request cost ${fixed(figures.lateToEarlyRequestCost)}×, bare SDK→MSW round trip at the same bodies ` +
        `${fixed(figures.bareLateToEarly)}× (goal ≤ ${fixed(lateGoal)}×, ${LATE_TO_EARLY_GOAL}× the bare one)  ${holds ? 'holds' : 'MISSED'}\n` +
        `(c) ${provider.padEnd(17)} peak memory of the 1,000-turn replay: heap ${fixed(figures.peakHeapMb, 0)} MB, RSS ${fixed(figures.peakRssMb, 0)} MB\n`,
    )
  }
  process.stdout.write(
    `\nworst 1,000/500 ratio ${fixed(worst)}× (goal ≤ ${fixed(RATIO_GOAL, 1)}×); ${missed === 0 ? 'every provider holds both goals' : `${missed} provider(s) missed a goal`}\n`,
  )
}

async function benchWholeMatrix(): Promise<void> {
  process.stdout.write('\n(g) the whole matrix (simulated), default jobs beside in process\n')
  const figures = await benchMatrix()
  const line = (label: string, run: MatrixRunFigures) =>
    `    ${label.padEnd(12)} ${run.jobs} ${run.jobs === 1 ? 'thread ' : 'threads'}  ${run.requests.toLocaleString('en-US')} requests  ` +
    `wall ${seconds(run.wallMs)}  CPU ${seconds(run.cpuMs)}  ${fixed(run.wallMs / run.requests)} ms wall per request\n`
  process.stdout.write(
    line('default', figures.parallel) +
      line('in process', figures.serial) +
      `    wall/CPU of the default run ${fixed(figures.wallToCpu)} (at most 0.70 on 2 cores), ` +
      `speed-up ${fixed(figures.serial.wallMs / figures.parallel.wallMs)}×, ` +
      `output ${figures.identical ? 'identical' : 'DIFFERENT'}\n`,
  )
  if (!figures.identical) process.exitCode = 1
}

/** (d)–(f): `serve` at scale. */
async function benchServe(): Promise<void> {
  const siblings = await benchSiblings()
  // (f) on a fresh server first, then again on the server (e) filled, before it closes: a long-running
  // serve holds many sessions and a large live heap, the state in which the large request must still
  // delay the small ones by no more than its own share.
  const fresh = await benchLargeRequest()
  let warm: LargeRequestFigures | undefined
  const expiry = await benchExpiry(20_000, async (server) => {
    warm = await benchLargeRequest({ server })
  })
  const large = (label: string, figures: LargeRequestFigures) => [
    `(f) serve, an 11 MB request beside small ones, ${label} (heap ${fixed(figures.heapMb, 0)} MB): small alone ${fixed(figures.smallAloneMs)} ms, ` +
      `slowest during ${fixed(figures.smallDuringMs)} ms; large ${fixed(figures.largeMs, 0)} ms end to end, ` +
      `its main-thread share ${fixed(figures.largeShareMs, 0)} ms (of ${fixed(figures.largeAgainMs, 0)} ms sent again alone)`,
    `    delay of the small request / the large request's own share ${fixed(figures.ratio)} (acceptance: at most 1)`,
  ]
  process.stdout.write(
    `${[
      '',
      `(d) serve, ${siblings.sessions.toLocaleString('en-US')} live sessions sharing a system prompt: ms per request by tenth`,
      `    ${siblings.tenthsMs.map((ms) => fixed(ms)).join('  ')}`,
      `    last tenth / second tenth ${fixed(siblings.ratio)}× (acceptance: at most 2×)`,
      `(e) serve, ${expiry.sessions.toLocaleString('en-US')} sessions expiring in virtual time (default memory budget): ` +
        `RSS by fifth ${expiry.rssMb.map((mb) => `${fixed(mb, 0)} MB`).join(', ')}; tries ${fixed(expiry.simulatorMb, 1)} MB, ` +
        `pruned ${expiry.prunes}×, ${fixed(expiry.seconds, 0)} s (acceptance: RSS under 1 GiB)`,
      ...large('on a fresh server', fresh),
      ...(warm !== undefined ? large('on the server (e) filled', warm) : []),
    ].join('\n')}\n`,
  )
}

/** (h): serve's requests per second beside a bare node server's, at the same bodies, in the same run. */
async function benchServeRates(): Promise<void> {
  process.stdout.write(
    '\n(h) serve against a bare node HTTP server reading the same bodies (one request after another, best of 3 rounds of 100)\n',
  )
  const shapes = [
    ['fresh 22k-token sessions', freshSessions],
    ['growing sessions (12k → 32k tokens)', growingSessions],
  ] as const
  for (const [label, shape] of shapes) {
    const figures = await benchServeRate(shape)
    process.stdout.write(
      `    ${label.padEnd(36)} serve ${fixed(figures.serveRate, 0)} req/s, bare ${fixed(figures.bareRate, 0)} req/s: ` +
        `${fixed(figures.ratio * 100, 0)}% (goal ≥ ${fixed(SERVE_RATE_GOAL * 100, 0)}%)  ` +
        `CPU per request ${fixed(figures.serveCpuMs, 1)} ms against ${fixed(figures.bareCpuMs, 1)} ms  ` +
        `${figures.ratio >= SERVE_RATE_GOAL ? 'holds' : 'MISSED'}\n`,
    )
  }
}
