// `npm run test:pack`: the package as a user gets it. Packs the tarball (`prepack` builds dist/) and checks
// that `npm publish --dry-run` warns about nothing in it. Installs it with Vitest alone into an empty
// project, where no client library, DSH package or better-sqlite3 may come with it (they are optional
// peers), the entry points import and their declarations type-check, `npx cachelab list` runs, and a
// command that needs a missing library asks for it in one line and exits 2. Then installs it with Vitest,
// Vite and the openai SDK into another empty ESM project and checks there: each entry point imports in
// plain node (and loads through require); the tarball holds only what users need; `npx cachelab list`
// and `run` work without tsx; a user's test files type-check against the declarations; docs/library.md's
// examples run in Vitest, the passing one passing and the negative one failing with the lines that page
// shows. Prints the tarball's unpacked size and each project's node_modules size. Needs the npm registry
// (or npm's cache). Exits 0 when every check holds, 1 otherwise;
// `--keep` keeps the directory; `--peers a@1,b@2` installs other versions beside cachelab (newer majors
// on Node 22+, see notes/2026-11-30-current-node.md) and `--skip-lib-check` type-checks as most projects do.

import { type SpawnSyncOptions, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  examplesProblems,
  installedPackages,
  type NpmTree,
  packProblems,
  publishWarnings,
  readmeExamples,
  unaskedPeers,
} from './pack-checks.ts'

/** The versions the user's project installs beside cachelab (by default the ones this repository tests with). */
const PEERS = peersOption() ?? ['vitest@4.1.12', 'vite@8.3.8', 'openai@6.49.0']

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
const ENTRY_EXPORTS: Readonly<Record<string, readonly string[]>> = {
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

const repository = fileURLToPath(new URL('..', import.meta.url))
/** The versions cachelab pins for its optional peers (its devDependencies), which its asks name. */
const pins = (
  JSON.parse(readFileSync(join(repository, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>
  }
).devDependencies
/** The Vitest the bare project installs beside the tarball: the one of `--peers`, else the pinned one. */
const VITEST = PEERS.find((peer) => /^vitest@/.test(peer)) ?? `vitest@${pins.vitest}`
const keep = process.argv.includes('--keep')
/**
 * `--skip-lib-check`: type-check the user's files as most projects do. Vitest 5 declares `Matchers` with
 * other type parameters than Vitest 4, so checking the declarations themselves reports TS2428.
 */
const skipLibCheck = process.argv.includes('--skip-lib-check')
/** Vitest 5 declares `Matchers` with other type parameters than the Vitest 4 cachelab/vitest augments. */
const MATCHERS_CLASH = /error TS2428: All declarations of 'Matchers' must have identical type parameters/

interface Outcome {
  code: number
  /** stdout and stderr together, colours off. */
  output: string
}

/** Run a command to its end; its output is kept for the report, not shown. */
function exec(command: string, args: readonly string[], cwd: string, timeoutMs = 300_000): Outcome {
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
function tail(outcome: Outcome, lines = 25): string[] {
  return outcome.output.trimEnd().split('\n').slice(-lines)
}

const results: Array<{ name: string; problems: string[] }> = []

/** Figures measured by the running check (sizes), printed under its result. */
const figures: string[] = []

/** A figure measured on the way, printed under the check that measured it. */
function inform(line: string): void {
  figures.push(line)
}

/** The size of a folder in MB, as `du -sm` counts it. */
function megabytes(folder: string): string {
  const counted = exec('du', ['-sm', folder], root)
  return counted.code === 0 ? `${counted.output.split(/\s/)[0]} MB` : 'unknown'
}

/** Write an empty ESM project's package.json into a fresh folder. */
function emptyProject(folder: string, name: string): void {
  rmSync(folder, { recursive: true, force: true })
  mkdirSync(folder, { recursive: true })
  writeFileSync(
    join(folder, 'package.json'),
    `${JSON.stringify({ name, private: true, type: 'module' }, null, 2)}\n`,
  )
}

/** Record a check; a thrown error is its problem. */
function step(name: string, check: () => string[]): void {
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

const root = mkdtempSync(join(tmpdir(), 'cachelab-pack-'))
const project = join(root, 'project')
const bare = join(root, 'bare')
const examples = readmeExamples(readFileSync(join(repository, 'docs', 'library.md'), 'utf8'))
let tarball: string | undefined
let installed = false
let bareInstalled = false

step('docs/library.md has a passing example and a documented negative case', () => examplesProblems(examples))

step('npm pack builds and packs the tarball', () => {
  const packed = exec('npm', ['pack', '--json', '--pack-destination', root], repository)
  if (packed.code !== 0) return ['npm pack failed:', ...tail(packed)]
  const [manifest] = JSON.parse(packed.output.slice(0, packed.output.lastIndexOf(']') + 1)) as Array<{
    filename: string
    size: number
    unpackedSize: number
    files: Array<{ path: string }>
  }>
  if (manifest === undefined) return ['npm pack printed no manifest']
  tarball = join(root, manifest.filename)
  inform(
    `${manifest.filename}: ${(manifest.size / 1e6).toFixed(1)} MB packed, ${(manifest.unpackedSize / 1e6).toFixed(1)} MB unpacked, ${manifest.files.length} files`,
  )
  const problems = packProblems(manifest.files.map((file) => file.path))
  return problems.length === 0 ? [] : ['the tarball holds the wrong files:', ...problems]
})

// The dry run uses the dist/ npm pack just built (its scripts would build it again); it never publishes.
step('npm publish --dry-run exits 0 with no warning about the package', () => {
  const published = exec('npm', ['publish', '--dry-run', '--ignore-scripts'], repository)
  if (published.code !== 0) return [`npm publish --dry-run exited ${published.code}:`, ...tail(published)]
  return publishWarnings(published.output)
})

step(`an empty project installs the tarball with ${VITEST} alone`, () => {
  if (tarball === undefined) return ['no tarball']
  emptyProject(bare, 'cachelab-bare')
  const install = exec(
    'npm',
    ['install', '--save-dev', '--prefer-offline', '--no-audit', '--no-fund', tarball, VITEST],
    bare,
  )
  if (install.code !== 0) return ['npm install failed:', ...tail(install)]
  bareInstalled = true
  inform(`node_modules: ${megabytes(join(bare, 'node_modules'))}`)
  return []
})

step('npm ls --all there lists no client library, DSH package or better-sqlite3', () => {
  if (!bareInstalled) return ['not installed']
  const listed = exec('npm', ['ls', '--all', '--json'], bare)
  const packages = installedPackages(
    JSON.parse(listed.output.slice(0, listed.output.lastIndexOf('}') + 1)) as NpmTree,
  )
  if (!packages.some((spec) => spec.startsWith('cachelab@')))
    return ['npm ls does not list cachelab:', ...tail(listed)]
  inform(`${packages.length} packages`)
  return unaskedPeers(packages).map((spec) => `installed unasked: ${spec}`)
})

step('each entry point imports there, and their declarations type-check with skipLibCheck false', () => {
  if (!bareInstalled) return ['not installed']
  const problems: string[] = []
  for (const [specifier, names] of Object.entries(ENTRY_EXPORTS)) {
    const script = `const m = await import(${JSON.stringify(specifier)}); const missing = ${JSON.stringify(names)}.filter((name) => !(name in m)); if (missing.length > 0) { console.log('missing exports: ' + missing.join(', ')); process.exit(1) }`
    const imported = exec(process.execPath, ['--input-type=module', '-e', script], bare)
    if (imported.code !== 0) problems.push(`import('${specifier}') failed:`, ...tail(imported, 8))
  }
  const uses = [
    "import { run, type StepRow } from 'cachelab'",
    "import { startCachelabMocks } from 'cachelab/msw'",
    "import { cachelabMatchers } from 'cachelab/vitest'",
    '',
    'export const entries = { run, startCachelabMocks, cachelabMatchers }',
    'export type Row = StepRow',
    '',
  ].join('\n')
  writeFileSync(join(bare, 'entries.ts'), uses)
  const config = {
    compilerOptions: {
      target: 'ES2023',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      types: ['node'],
      typeRoots: [join(repository, 'node_modules', '@types')],
    },
    files: ['entries.ts'],
  }
  writeFileSync(join(bare, 'tsconfig.json'), `${JSON.stringify(config, null, 2)}\n`)
  const typescript = join(repository, 'node_modules', 'typescript', 'bin', 'tsc')
  const checked = exec(process.execPath, [typescript, '-p', bare], bare)
  if (checked.code !== 0) {
    // Under `--skip-lib-check` (Vitest 5) the one known clash, Vitest 5's `Matchers` type parameters against
    // the ones cachelab/vitest augments, is let through; any other error still fails.
    const errors = checked.output.split('\n').filter((line) => /error TS\d+/.test(line))
    const unknown = skipLibCheck ? errors.filter((line) => !MATCHERS_CLASH.test(line)) : errors
    if (unknown.length > 0 || errors.length === 0) problems.push('tsc failed:', ...tail(checked))
    else inform(`let through under --skip-lib-check: ${errors.length} TS2428 on Vitest's Matchers`)
  }
  return problems
})

/** Problems of `npx cachelab list` in an installed project: it must exit 0 and print the scenarios. */
function listProblems(dir: string): string[] {
  const listed = exec('npx', ['--no-install', 'cachelab', 'list'], dir)
  if (listed.code !== 0) return [`exit ${listed.code}:`, ...tail(listed)]
  return listed.output.startsWith('Scenarios:') ? [] : ['it did not print the scenarios:', ...tail(listed, 5)]
}

step('npx cachelab list runs there', () => (bareInstalled ? listProblems(bare) : ['not installed']))

step('a command that needs a missing library asks for it by name in one line, and exits 2', () => {
  if (!bareInstalled) return ['not installed']
  const asks = [
    {
      argv: ['run', '--scenario', 'append-only', '--provider', 'openai-chat,deepseek'],
      line: `cachelab: run drives scenarios through the openai SDK: npm i -D openai@${pins.openai}`,
    },
    {
      argv: ['run', '--loop', 'dsh', '--scenario', 'append-only', '--provider', 'deepseek'],
      line: `cachelab: --loop dsh needs @deepseek-ai/cordis, which is not installed: npm i -D @deepseek-ai/dsh-agent-loop@${pins['@deepseek-ai/dsh-agent-loop']} @deepseek-ai/dsh-llm-deepseek@${pins['@deepseek-ai/dsh-llm-deepseek']}`,
    },
  ]
  const problems: string[] = []
  for (const ask of asks) {
    const ran = exec('npx', ['--no-install', 'cachelab', ...ask.argv, '--out', join(bare, 'out')], bare)
    const printed = ran.output.trim()
    if (ran.code !== 2 || printed !== ask.line)
      problems.push(
        `cachelab ${ask.argv.join(' ')} exited ${ran.code}, printing:`,
        ...tail(ran, 5),
        `not: ${ask.line}`,
      )
  }
  return problems
})

step(`an empty ESM project installs the tarball with ${PEERS.join(', ')}`, () => {
  if (tarball === undefined) return ['no tarball']
  emptyProject(project, 'cachelab-user')
  const install = exec(
    'npm',
    ['install', '--save-dev', '--prefer-offline', '--no-audit', '--no-fund', tarball, ...PEERS],
    project,
  )
  if (install.code !== 0) return ['npm install failed:', ...tail(install)]
  installed = true
  inform(`node_modules: ${megabytes(join(project, 'node_modules'))}`)
  return existsSync(join(project, 'node_modules', 'tsx'))
    ? ['tsx got installed, so the checks below could not tell whether cachelab needs it']
    : []
})

step('each entry point imports in plain node (ESM), with its exports', () => {
  if (!installed) return ['not installed']
  const problems: string[] = []
  for (const [specifier, names] of Object.entries(ENTRY_EXPORTS)) {
    const script = `const m = await import(${JSON.stringify(specifier)}); const missing = ${JSON.stringify(names)}.filter((name) => !(name in m)); if (missing.length > 0) { console.log('missing exports: ' + missing.join(', ')); process.exit(1) }`
    const imported = exec(process.execPath, ['--input-type=module', '-e', script], project)
    if (imported.code !== 0) problems.push(`import('${specifier}') failed:`, ...tail(imported, 8))
  }
  const manifest = exec(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "const m = await import('cachelab/package.json', { with: { type: 'json' } }); if (m.default.name !== 'cachelab') process.exit(1)",
    ],
    project,
  )
  if (manifest.code !== 0) problems.push("import('cachelab/package.json') failed:", ...tail(manifest, 8))
  return problems
})

step('each entry point loads through require() too (CommonJS, Node 20.19+)', () => {
  if (!installed) return ['not installed']
  const problems: string[] = []
  for (const [specifier, names] of Object.entries(ENTRY_EXPORTS)) {
    const script = `const m = require(${JSON.stringify(specifier)}); const missing = ${JSON.stringify(names)}.filter((name) => !(name in m)); if (missing.length > 0) { console.log('missing exports: ' + missing.join(', ')); process.exit(1) }`
    const required = exec(process.execPath, ['--no-warnings', '-e', script], project)
    if (required.code !== 0) problems.push(`require('${specifier}') failed:`, ...tail(required, 8))
  }
  return problems
})

step('the built JavaScript imports neither vitest nor tsx', () => {
  if (!installed) return ['not installed']
  const dist = join(project, 'node_modules', 'cachelab', 'dist')
  const offenders = (readdirSync(dist, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.js'))
    .filter((file) =>
      /(from|import\()\s*['"](vitest|tsx)(\/[^'"]*)?['"]/.test(readFileSync(join(dist, file), 'utf8')),
    )
  return offenders.map((file) => `dist/${file} imports vitest or tsx at run time`)
})

step('npx cachelab list runs from node_modules with plain node', () =>
  installed ? listProblems(project) : ['not installed'],
)

step('npx cachelab run spreads sessions over worker threads from the built package', () => {
  if (!installed) return ['not installed']
  const out = join(project, 'jobs-run')
  const argv = [
    '--no-install',
    'cachelab',
    'run',
    '--scenario',
    'append-only',
    '--provider',
    'openai-chat,deepseek',
  ]
  const ran = exec('npx', [...argv, '--jobs', '2', '--out', out], project)
  if (ran.code !== 0) return [`exit ${ran.code}:`, ...tail(ran)]
  const sessions = readdirSync(join(out, 'sessions'))
  return sessions.length === 2 ? [] : [`expected 2 session logs, found ${sessions.join(', ') || 'none'}`]
})

/**
 * Vitest's default 5 s per test is a speed target on a loaded 2-core machine (docs/library.md's passing example
 * takes 5–6 s there, as it did before the optional peers): the examples get the room this repository's
 * own tests have.
 */
const VITEST_ROOM = ['--testTimeout', '300000', '--hookTimeout', '300000']

// docs/library.md's examples, and a file of our own that imports every entry point inside Vitest.
const passing = examples.files.filter((file) => !file.fails)
const failing = examples.files.filter((file) => file.fails)
const entriesTest = {
  name: 'entries.test.ts',
  code: [
    "import { expect, it } from 'vitest'",
    '',
    `const ENTRY_EXPORTS: Record<string, string[]> = ${JSON.stringify(ENTRY_EXPORTS)}`,
    '',
    "it.each(Object.entries(ENTRY_EXPORTS))('%s imports in Vitest', async (specifier, names) => {",
    '  const entry = await import(specifier)',
    '  for (const name of names) expect(entry).toHaveProperty(name)',
    '})',
    '',
  ].join('\n'),
}

step("a user's test files type-check against the declarations (expect's matchers included)", () => {
  if (!installed) return ['not installed']
  for (const file of [...examples.files, entriesTest]) writeFileSync(join(project, file.name), file.code)
  const config = {
    compilerOptions: {
      target: 'ES2023',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck,
      types: ['node'],
      typeRoots: [join(repository, 'node_modules', '@types')],
    },
    files: [...examples.files, entriesTest].map((file) => file.name),
  }
  writeFileSync(join(project, 'tsconfig.json'), `${JSON.stringify(config, null, 2)}\n`)
  const typescript = join(repository, 'node_modules', 'typescript', 'bin', 'tsc')
  const checked = exec(process.execPath, [typescript, '-p', project], project)
  return checked.code === 0 ? [] : ['tsc failed:', ...tail(checked)]
})

step(`Vitest passes ${[entriesTest, ...passing].map((file) => file.name).join(', ')}`, () => {
  if (!installed) return ['not installed']
  const vitest = join(project, 'node_modules', '.bin', 'vitest')
  const ran = exec(
    vitest,
    ['run', ...VITEST_ROOM, ...[entriesTest, ...passing].map((file) => file.name)],
    project,
  )
  return ran.code === 0 ? [] : [`vitest exited ${ran.code}:`, ...tail(ran, 40)]
})

for (const file of failing) {
  step(`Vitest fails ${file.name}, printing the lines docs/library.md shows`, () => {
    if (!installed) return ['not installed']
    const vitest = join(project, 'node_modules', '.bin', 'vitest')
    const ran = exec(vitest, ['run', ...VITEST_ROOM, file.name], project)
    if (ran.code !== 1) return [`vitest exited ${ran.code}, not 1:`, ...tail(ran, 40)]
    const missing = (examples.failures.get(file.name) ?? []).filter((line) => !ran.output.includes(line))
    return missing.length === 0
      ? []
      : ['the output lacks these documented lines:', ...missing, 'it printed:', ...tail(ran, 40)]
  })
}

if (keep) process.stdout.write(`kept ${root}\n`)
else rmSync(root, { recursive: true, force: true })
const failed = results.filter((result) => result.problems.length > 0).length
process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`)
process.exitCode = failed > 0 ? 1 : 0
