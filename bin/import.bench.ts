// Benchmark (i): `cachelab import` beside ccusage (`ccusage daily --offline --json`, the tool Claude Code
// users run over the same files) on a synthetic Claude Code corpus
// (reports/observed/transcripts/claude-code-corpus.ts), small and 100 times over: the CPU time (user + sys)
// of each whole process tree, the two run one after the other in rounds of the same run, and their ratio. cachelab runs as the package runs it (the built JavaScript,
// without the repository's start-up checks), ccusage as its pinned version installs into the agents' cache
// (harness/loops/agents/install.ts), never into the project; where it cannot be installed or run, the
// figures are not measured and the reason is given. Beside them, in the same rounds, a bare Node reader of
// the same files (bin/import-floor.ts) shows what Node alone pays to parse every line. Then (j) the peak
// RSS of `cachelab import` on one Claude Code session of 1 GB of small requests (bin/import-memory.ts's
// shape with the most rows a byte).

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CachelabError } from '../harness/errors.ts'
import { installedAgent } from '../harness/loops/agents/install.ts'
import { writeClaudeCodeCorpus } from '../reports/observed/transcripts/claude-code-corpus.ts'
import {
  BENCH_GOALS,
  type ContractFigure,
  holds,
  importFigure,
  importMemoryFigure,
  UNMEASURED_IN_RUN,
} from '../scenarios/bench-contract.ts'
import { writeLongClaudeCodeSession } from './import-memory.ts'

/**
 * The ccusage measured against, pinned: 20.0.26, the latest 20.x, publishes no native binary for Linux x64
 * (notes/2026-12-02-startup-and-import-speed.md).
 */
export const CCUSAGE = { package: 'ccusage', version: '20.0.24', bin: 'ccusage' } as const

/** Sessions of the small corpus (about 4 MB, as the six real samples are), and copies of the large. */
const SESSIONS = 6
const COPIES = 100

/** One corpus measured. */
export interface ImportCpuFigures {
  /** `small` or `100 times`. */
  corpus: string
  files: number
  bytes: number
  rounds: number
  /** Mean CPU milliseconds of a round. */
  cachelabCpuMs: number
  ccusageCpuMs: number
  /** A bare Node reader's (bin/import-floor.ts: read, decode and `JSON.parse` every line, nothing else). */
  floorCpuMs: number
}

/** What (i) found: the figures, or why there are none. */
export type ImportBench =
  | { kind: 'measured'; corpora: ImportCpuFigures[] }
  | { kind: 'not-measured'; reason: string }

/** A command's CPU time (its own and every descendant's it waited for), exit status and error output. */
export interface Timed {
  cpuMs: number
  status: number | null
  stdout: string
  stderr: string
}

/**
 * Run a command under the shell and read the CPU time of its process tree with `times` (POSIX: the
 * shell's children's user and sys time, which count every descendant waited for: ccusage's native binary
 * under its node launcher included). bash prints milliseconds; a plain sh prints clock ticks.
 */
export function timed(command: readonly string[], env: NodeJS.ProcessEnv = process.env): Timed {
  const shell = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh'
  const script = '"$@" > "$CACHELAB_BENCH_OUT" 2> "$CACHELAB_BENCH_ERR"; status=$?; times; exit $status'
  const scratch = mkdtempSync(join(tmpdir(), 'cachelab-bench-timed-'))
  try {
    const out = join(scratch, 'out')
    const err = join(scratch, 'err')
    const run = spawnSync(shell, ['-c', script, 'timed', ...command], {
      encoding: 'utf8',
      env: { ...env, CACHELAB_BENCH_OUT: out, CACHELAB_BENCH_ERR: err },
    })
    const times = [...run.stdout.matchAll(/(\d+)m([\d.]+)s/g)].map(
      (match) => Number(match[1]) * 60 + Number(match[2]),
    )
    // `times` prints the shell's own user and sys, then its children's.
    const cpuMs = ((times[2] ?? 0) + (times[3] ?? 0)) * 1000
    const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '')
    return { cpuMs, status: run.status, stdout: read(out), stderr: read(err) }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/** The built JavaScript's `bin/cli.js` (bin/dev-build.js keeps it fresh), run as bin/cachelab.js runs it. */
async function builtCli(): Promise<string> {
  const { prepare } = (await import(new URL('./dev-build.js', import.meta.url).href)) as {
    prepare: (root: string) => Promise<URL>
  }
  return (await prepare(fileURLToPath(new URL('..', import.meta.url)))).href
}

/** `cachelab ARGS` run from the built JavaScript, printing its peak RSS in KB last on stderr. */
function cachelabCommand(cli: string, args: readonly string[]): string[] {
  const script =
    'const [cli, ...args] = process.argv.slice(1); const { main } = await import(cli);' +
    'process.exitCode = await main(args);' +
    "process.on('exit', () => process.stderr.write('\\nmax-rss-kb ' + process.resourceUsage().maxRSS + '\\n'))"
  return [process.execPath, '--input-type=module', '-e', script, cli, ...args]
}

/** bin/import-floor.ts's bare reader over FOLDER, as a process started the way `cachelabCommand`'s is. */
function floorCommand(cli: string, folder: string): string[] {
  const floor = new URL('./import-floor.js', cli).href
  const script =
    'const [floor, folder] = process.argv.slice(1); const { readLinesBare } = await import(floor);' +
    'process.stdout.write(JSON.stringify(readLinesBare(folder)))'
  return [process.execPath, '--input-type=module', '-e', script, floor, folder]
}

/** How many days `ccusage daily --json` reports usage for (0 when its output is not that JSON). */
function dailyEntries(output: string): number {
  try {
    const daily = (JSON.parse(output) as { daily?: unknown }).daily
    return Array.isArray(daily) ? daily.length : 0
  } catch {
    return 0
  }
}

/** The last line of a failed command's error output, for a one-line reason. */
const lastLine = (text: string) => text.trim().split('\n').at(-1) ?? ''

/** (i): both tools on the small corpus and on it 100 times; `rounds` small rounds, fewer large. */
export async function benchImportAgainstCcusage(rounds = { small: 5, large: 2 }): Promise<ImportBench> {
  let ccusage: string
  try {
    ccusage = await installedAgent(CCUSAGE)
  } catch (error) {
    const reason = error instanceof CachelabError ? error.message : String(error)
    return { kind: 'not-measured', reason }
  }
  let cli: string
  try {
    cli = await builtCli()
  } catch (error) {
    return { kind: 'not-measured', reason: `no built JavaScript to run (${(error as Error).message})` }
  }
  const dir = mkdtempSync(join(tmpdir(), 'cachelab-bench-import-'))
  try {
    const corpora = [
      { corpus: 'small', path: join(dir, 'small'), copies: 1, rounds: rounds.small },
      { corpus: `${COPIES} times`, path: join(dir, 'large'), copies: COPIES, rounds: rounds.large },
    ]
    const figures: ImportCpuFigures[] = []
    for (const each of corpora) {
      const written = writeClaudeCodeCorpus(each.path, SESSIONS, each.copies)
      const ccusageRun = () =>
        timed([ccusage, 'daily', '--offline', '--json'], { ...process.env, CLAUDE_CONFIG_DIR: each.path })
      const cachelabRun = () =>
        timed(cachelabCommand(cli, ['import', join(each.path, 'projects'), '--out', join(dir, 'out')]))
      // Once each before the rounds: a tool that fails, or a ccusage that reads nothing, measures nothing.
      const first = ccusageRun()
      if (first.status !== 0)
        return { kind: 'not-measured', reason: `ccusage failed: ${lastLine(first.stderr)}` }
      if (dailyEntries(first.stdout) === 0)
        return { kind: 'not-measured', reason: 'ccusage found no usage in the corpus' }
      const own = cachelabRun()
      if (own.status !== 0)
        return { kind: 'not-measured', reason: `cachelab import failed: ${lastLine(own.stderr)}` }
      const floorRun = () => timed(floorCommand(cli, join(each.path, 'projects')))
      const floor = floorRun()
      if (floor.status !== 0)
        return { kind: 'not-measured', reason: `the bare reader failed: ${lastLine(floor.stderr)}` }
      let cachelabCpuMs = 0
      let ccusageCpuMs = 0
      let floorCpuMs = 0
      for (let round = 0; round < each.rounds; round += 1) {
        ccusageCpuMs += ccusageRun().cpuMs
        cachelabCpuMs += cachelabRun().cpuMs
        floorCpuMs += floorRun().cpuMs
      }
      figures.push({
        corpus: each.corpus,
        files: written.files,
        bytes: written.bytes,
        rounds: each.rounds,
        cachelabCpuMs: cachelabCpuMs / each.rounds,
        ccusageCpuMs: ccusageCpuMs / each.rounds,
        floorCpuMs: floorCpuMs / each.rounds,
      })
      rmSync(each.path, { recursive: true, force: true })
    }
    return { kind: 'measured', corpora: figures }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** (j): what (j) found, and the transcript it read. */
export interface ImportMemoryFigures {
  bytes: number
  requests: number
  peakRssMb: number
  cpuMs: number
}

/** (j): one session of about `gigabytes` GB of small requests, imported; the process's peak RSS. */
export async function benchImportMemory(gigabytes = 1): Promise<ImportMemoryFigures> {
  const cli = await builtCli()
  const dir = mkdtempSync(join(tmpdir(), 'cachelab-bench-import-memory-'))
  try {
    const file = join(dir, 'session.jsonl')
    const requests = await writeLongClaudeCodeSession(file, gigabytes * 1e9, { growth: 0, cap: 300 })
    const run = timed(cachelabCommand(cli, ['import', file, '--out', join(dir, 'out')]))
    const kb = /max-rss-kb (\d+)/.exec(run.stderr)?.[1]
    if (run.status !== 0 || kb === undefined)
      throw new CachelabError(
        'invariant',
        `cachelab import of the 1 GB session failed: ${lastLine(run.stderr)}`,
      )
    return { bytes: statSync(file).size, requests, peakRssMb: Number(kb) / 1024, cpuMs: run.cpuMs }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** What the import part found, as bench.ts prints and judges it. */
export interface ImportPart {
  /** The lines printed. */
  text: string
  figures: ContractFigure[]
  /** What this run could not measure, and why (the README names it instead of a figure). */
  unmeasured: string[]
}

const seconds = (milliseconds: number) => `${(milliseconds / 1000).toFixed(2)} s`
const megabytes = (bytes: number) => bytes / 1e6

/** (i) and (j), measured and printed. */
export async function importPart(): Promise<ImportPart> {
  const lines = [
    '',
    `(i) cachelab import beside ccusage ${CCUSAGE.version} (\`ccusage daily --offline --json\`) on the same synthetic Claude Code files:`,
    '    CPU (user + sys) of each whole process tree, the two one after the other in each round; cachelab as the package runs it',
  ]
  const figures: ContractFigure[] = []
  const unmeasured: string[] = []
  const cpu = await benchImportAgainstCcusage()
  if (cpu.kind === 'not-measured') {
    lines.push(`    not measured: ${cpu.reason}`)
    unmeasured.push(`${UNMEASURED_IN_RUN.importCpu}${cpu.reason}`)
  } else
    for (const corpus of cpu.corpora) {
      const figure = importFigure(
        corpus.corpus,
        megabytes(corpus.bytes),
        corpus.cachelabCpuMs / corpus.ccusageCpuMs,
        corpus.floorCpuMs / corpus.ccusageCpuMs,
      )
      figures.push(figure)
      lines.push(
        `    ${corpus.corpus.padEnd(9)} ${corpus.files} files, ${megabytes(corpus.bytes).toFixed(1)} MB, ${corpus.rounds} rounds: ` +
          `cachelab ${seconds(corpus.cachelabCpuMs)}, ccusage ${seconds(corpus.ccusageCpuMs)}: ` +
          `${figure.measured.toFixed(2)}× (goal ≤ ${BENCH_GOALS.importCpuOverCcusage}×)  ${holds(figure) ? 'holds' : 'MISSED'}`,
        `    ${''.padEnd(9)} a bare Node reader of the same files (read, decode, JSON.parse every line; nothing else): ` +
          `${seconds(corpus.floorCpuMs)}, ${(corpus.floorCpuMs / corpus.ccusageCpuMs).toFixed(2)}× ccusage's`,
      )
    }
  try {
    const memory = await benchImportMemory()
    const figure = importMemoryFigure(memory.bytes / 1e9, memory.peakRssMb)
    figures.push(figure)
    lines.push(
      `(j) cachelab import of one ${(memory.bytes / 1e9).toFixed(2)} GB Claude Code session, ${memory.requests.toLocaleString('en-US')} small requests: ` +
        `peak RSS ${memory.peakRssMb.toFixed(0)} MB (goal ≤ ${BENCH_GOALS.importPeakRssMb} MB), CPU ${seconds(memory.cpuMs)}  ${holds(figure) ? 'holds' : 'MISSED'}`,
    )
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    lines.push(`(j) not measured: ${reason}`)
    unmeasured.push(`${UNMEASURED_IN_RUN.importMemory}${reason}`)
  }
  return { text: `${lines.join('\n')}\n`, figures, unmeasured }
}
