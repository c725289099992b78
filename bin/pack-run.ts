// The machinery of `npm run test:pack` (bin/pack-e2e.ts): its options, a command run to its end with its
// output kept, and the checks recorded one by one, each printed as it ends with its problems and figures.

import { type SpawnSyncOptions, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The versions the user's project installs beside cachelab (by default the ones this repository tests with). */
export const PEERS = peersOption() ?? ['vitest@4.1.12', 'vite@8.3.8', 'openai@6.49.0']

/** `--peers a@1,b@2` (or `--peers=…`): the packages to install instead of the defaults. */
function peersOption(): string[] | undefined {
  const index = process.argv.findIndex((arg) => arg === '--peers' || arg.startsWith('--peers='))
  if (index === -1) return undefined
  const arg = process.argv[index] ?? ''
  const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : process.argv[index + 1]
  const peers = (value ?? '').split(',').filter((peer) => peer !== '')
  if (peers.length === 0) {
    process.stderr.write('--peers needs a comma-separated list of packages, e.g. vitest@5.1.2,vite@8.4.0\n')
    process.exit(2)
  }
  return peers
}

/** Per entry point, exports it must have at run time. */
export const ENTRY_EXPORTS: Readonly<Record<string, readonly string[]>> = {
  cachelab: [
    'run',
    'simulate',
    'check',
    'summarize',
    'SCENARIOS',
    'CATALOG',
    'readSummaryCsv',
    'CachelabError',
    'reportCapture',
    'defineScenario',
  ],
  'cachelab/msw': [
    'mockHandlers',
    'MockContext',
    'startMockProviders',
    'startCachelabMocks',
    'cachelabHandlers',
  ],
  'cachelab/vitest': ['cachelabMatchers'],
}

export const repository = fileURLToPath(new URL('..', import.meta.url))
/** The versions cachelab pins for its optional peers (its devDependencies), which its asks name. */
export const pins = (
  JSON.parse(readFileSync(join(repository, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>
  }
).devDependencies
/** The Vitest the bare project installs beside the tarball: the one of `--peers`, else the pinned one. */
export const VITEST = PEERS.find((peer) => /^vitest@/.test(peer)) ?? `vitest@${pins.vitest}`
export const keep = process.argv.includes('--keep')
/**
 * `--skip-lib-check`: type-check the user's files as most projects do. Vitest 5 declares `Matchers` with
 * other type parameters than Vitest 4, so checking the declarations themselves reports TS2428.
 */
export const skipLibCheck = process.argv.includes('--skip-lib-check')
/** Vitest 5 declares `Matchers` with other type parameters than the Vitest 4 cachelab/vitest augments. */
export const MATCHERS_CLASH =
  /error TS2428: All declarations of 'Matchers' must have identical type parameters/

export interface Outcome {
  code: number
  /** stdout and stderr together, colours off. */
  output: string
}

/** Run a command to its end; its output is kept for the report, not shown. */
export function exec(command: string, args: readonly string[], cwd: string, timeoutMs = 300_000): Outcome {
  const options: SpawnSyncOptions = {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', CI: 'true' },
  }
  const result = spawnSync(command, args, options)
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error === undefined ? '' : `\n${result.error.message}`}`
  return { code: result.status ?? 1, output }
}

/** The last lines of a command's output, to show why it failed. */
export function tail(outcome: Outcome, lines = 25): string[] {
  return outcome.output.trimEnd().split('\n').slice(-lines)
}

export const results: Array<{ name: string; problems: string[] }> = []

/** Figures measured by the running check (sizes), printed under its result. */
const figures: string[] = []

/** A figure measured on the way, printed under the check that measured it. */
export function inform(line: string): void {
  figures.push(line)
}

/** The size of a folder in MB, as `du -sm` counts it. */
export function megabytes(folder: string): string {
  const counted = exec('du', ['-sm', folder], dirname(folder))
  return counted.code === 0 ? `${counted.output.split(/\s/)[0]} MB` : 'unknown'
}

/** Write an empty ESM project's package.json into a fresh folder. */
export function emptyProject(folder: string, name: string): void {
  rmSync(folder, { recursive: true, force: true })
  mkdirSync(folder, { recursive: true })
  writeFileSync(
    join(folder, 'package.json'),
    `${JSON.stringify({ name, private: true, type: 'module' }, null, 2)}\n`,
  )
}

/** Record a check; a thrown error is its problem. */
export function step(name: string, check: () => string[]): void {
  let problems: string[]
  try {
    problems = check()
  } catch (error) {
    problems = [error instanceof Error ? error.message : String(error)]
  }
  results.push({ name, problems })
  process.stdout.write(problems.length === 0 ? `ok    ${name}\n` : `FAIL  ${name}\n`)
  for (const line of [...problems, ...figures.splice(0)]) process.stdout.write(`        ${line}\n`)
}

/** Problems of `npx cachelab list` in an installed project: it must exit 0 and print the scenarios. */
export function listProblems(dir: string): string[] {
  const listed = exec('npx', ['--no-install', 'cachelab', 'list'], dir)
  if (listed.code !== 0) return [`exit ${listed.code}:`, ...tail(listed)]
  return listed.output.startsWith('Scenarios:') ? [] : ['it did not print the scenarios:', ...tail(listed, 5)]
}
