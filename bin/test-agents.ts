// `npm run test:agents [-- --latest] [vitest arguments…]`: the agents suite (scenarios/agents/), at the
// pinned versions (what CI gates on), or with `--latest` at the newest versions the npm registry publishes
// (what users run): then it never fails, and prints per agent and version which tests held and which did
// not, for a note or docs/serve.md.

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { AGENT_DRIVERS, AGENT_NAMES, type AgentName, latestVersion } from '../harness/loops/agents/index.ts'
import { AGENT_VERSIONS_VARIABLE } from '../scenarios/agents/session.ts'

/** One test file's results, as Vitest's JSON reporter writes them. */
interface FileResult {
  name: string
  /** `failed` also when the file's setup failed and its tests were skipped. */
  status?: string
  message?: string
  assertionResults: Array<{ fullName: string; status: string }>
}

/** The agents a test file drives, by its name: its agent's, every agent for the files that run them all. */
export function agentsOfFile(file: string): AgentName[] {
  const name = basename(file).replace(/\.agents\.test\.ts$/, '')
  if (name === 'all') return [...AGENT_NAMES]
  if (name === 'run') return ['claude-code', 'opencode']
  if (name === 'run-shards') return ['claude-code', 'codex']
  const agent = [...AGENT_NAMES]
    .sort((a, b) => b.length - a.length)
    .find((candidate) => name === candidate || name.startsWith(`${candidate}-`))
  return agent === undefined ? [] : [agent]
}

/** The table of a `--latest` run: per agent and version, the tests that held and those that did not. */
export function latestTable(
  versions: ReadonlyMap<AgentName, string>,
  files: readonly FileResult[],
  date: string,
): string[] {
  const lines = [
    `agents suite at the newest published versions, ${date} (pinned in CI: ${AGENT_NAMES.map((name) => `${name} ${AGENT_DRIVERS[name].version}`).join(', ')})`,
    '',
    '| agent | version | tests held | tests failed | what failed |',
    '| --- | --- | ---: | ---: | --- |',
  ]
  for (const agent of AGENT_NAMES) {
    const mine = files.filter((file) => agentsOfFile(file.name).includes(agent))
    // A file whose setup failed (an agent that hung, crashed or was refused) skips its tests: it counts as
    // one failure, named by its message.
    const results = mine.flatMap((file) => [
      ...file.assertionResults.map((result) => ({ file: basename(file.name), ...result })),
      ...(file.status === 'failed' && !file.assertionResults.some((result) => result.status === 'failed')
        ? [{ file: basename(file.name), fullName: `setup: ${firstLine(file.message)}`, status: 'failed' }]
        : []),
    ])
    const failed = results.filter((result) => result.status === 'failed')
    const held = results.filter((result) => result.status === 'passed').length
    const what = failed.map((result) => `${result.file}: ${result.fullName}`).join('; ')
    lines.push(`| ${agent} | ${versions.get(agent) ?? ''} | ${held} | ${failed.length} | ${what || '-'} |`)
  }
  return lines
}

/** The first line of a message, clipped, with no table separator in it. */
function firstLine(message: string | undefined): string {
  const line = (message ?? 'failed').trim().split('\n')[0] ?? ''
  return (line.length > 160 ? `${line.slice(0, 159)}…` : line).replaceAll('|', '/')
}

async function main(argv: readonly string[]): Promise<number> {
  const latest = argv.includes('--latest')
  const rest = argv.filter((arg) => arg !== '--latest')
  const vitest = join(process.cwd(), 'node_modules', 'vitest', 'vitest.mjs')
  if (!latest) {
    const run = spawnSync(process.execPath, [vitest, 'run', '--project', 'agents', ...rest], {
      stdio: 'inherit',
    })
    return run.status ?? 1
  }
  const versions = new Map<AgentName, string>()
  for (const name of AGENT_NAMES) versions.set(name, await latestVersion(AGENT_DRIVERS[name]))
  const variable = [...versions].map(([name, version]) => `${name}@${version}`).join(',')
  process.stderr.write(`test:agents --latest: ${variable}\n`)
  const folder = mkdtempSync(join(tmpdir(), 'cachelab-test-agents-'))
  const report = join(folder, 'results.json')
  try {
    spawnSync(
      process.execPath,
      [
        vitest,
        'run',
        '--project',
        'agents',
        '--reporter=default',
        '--reporter=json',
        `--outputFile.json=${report}`,
        ...rest,
      ],
      { stdio: 'inherit', env: { ...process.env, [AGENT_VERSIONS_VARIABLE]: variable } },
    )
    let files: FileResult[] = []
    try {
      files = (JSON.parse(readFileSync(report, 'utf8')) as { testResults: FileResult[] }).testResults
    } catch {
      process.stderr.write('test:agents --latest: Vitest wrote no results\n')
    }
    const date = new Date().toISOString().slice(0, 10)
    process.stdout.write(`\n${latestTable(versions, files, date).join('\n')}\n`)
    // The newest versions inform; only the pins gate.
    return 0
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`)
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`test:agents: ${error instanceof Error ? error.message : String(error)}\n`)
      process.exit(2)
    },
  )
