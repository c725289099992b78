// `cachelab run --agent`: each agent asked for through each agent scenario, a session per pair against a
// loopback serve of its own (a fresh simulated cache, so no session reads another's prefix), then the
// side by side (reports/agents.ts) and the capture's rows written into a run folder: agents.csv,
// agent-steps.csv beside steps.csv, summary.csv, breaks.csv, claims.csv and report.html.

import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { CachelabError } from '../../harness/errors.ts'
import {
  AGENT_DRIVERS,
  AGENT_NAMES,
  type AgentDriver,
  type AgentName,
  type AgentOptions,
  cachelabMcpServer,
  installedAgent,
  LATEST,
  latestVersion,
} from '../../harness/loops/agents/index.ts'
import { cachelabVersion } from '../../harness/version.ts'
import { catalogEntries } from '../../providers/catalog.ts'
import type { ReplyRuleInput } from '../../providers/mock/reply-file.ts'
import {
  type AgentRow,
  type AgentSessionRecord,
  agentsCsv,
  agentsSummaryLines,
  compareAgents,
} from '../../reports/agents.ts'
import { captureRows } from '../../reports/capture-rows.ts'
import { stepsCsv } from '../../reports/csv.ts'
import { RunFolder, runStamp } from '../../reports/run-folder.ts'
import type { StepRow } from '../../reports/types.ts'
import { writeRunFiles } from '../run-files.ts'
import {
  assignShards,
  digestOf,
  noSharedRunId,
  SHARD_FILE,
  SHARD_FORMAT,
  SHARD_VERSION,
  type ShardOptions,
  shardLabel,
  shardText,
} from '../shards.ts'
import { AGENT_SCENARIOS, type AgentScenario, agentScenario, notApplicable, planTurns } from './scripts.ts'
import { startAgentBench } from './session.ts'

const execFileAsync = promisify(execFile)

/** An agent as `--agent` names it: `opencode`, `opencode@1.18.33` for that version, `opencode@latest`. */
export interface AgentSpec {
  name: AgentName
  version?: string
}

/** Parse `--agent`'s comma-separated list; an unknown name or an empty version is a usage error. */
export function parseAgentSpecs(value: string): AgentSpec[] {
  const specs = value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part): AgentSpec => {
      const at = part.lastIndexOf('@')
      const name = at > 0 ? part.slice(0, at) : part
      const version = at > 0 ? part.slice(at + 1) : undefined
      if (!(AGENT_NAMES as readonly string[]).includes(name))
        throw new CachelabError('usage', `--agent: unknown agent ${name} (known: ${AGENT_NAMES.join(', ')})`)
      if (version !== undefined && !/^[0-9A-Za-z.+-]+$/.test(version))
        throw new CachelabError('usage', `--agent ${part}: the version must be like 1.2.3`)
      return { name: name as AgentName, ...(version !== undefined ? { version } : {}) }
    })
  if (specs.length === 0) throw new CachelabError('usage', '--agent needs at least one agent name')
  return specs
}

/** Parse `--scenario` for agents: names of AGENT_SCENARIOS (all of them when absent or `all`). */
export function chosenAgentScenarios(value: string | undefined): AgentScenario[] {
  if (value === undefined || value === 'all') return [...AGENT_SCENARIOS]
  return value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
    .map((name) => {
      const scenario = agentScenario(name)
      if (scenario === undefined)
        throw new CachelabError(
          'usage',
          `--scenario: no agent scenario ${name} (known: ${AGENT_SCENARIOS.map((known) => known.name).join(', ')})`,
        )
      return scenario
    })
}

/** The agent that runs: its driver at the version that runs, its command, and where it came from. */
export interface ResolvedAgent {
  driver: AgentDriver
  bin: string
  version: string
  source: 'path' | 'cache'
}

/** A command on PATH, or undefined. */
function onPath(bin: string, path = process.env.PATH ?? ''): string | undefined {
  for (const folder of path.split(delimiter))
    if (folder !== '' && existsSync(join(folder, bin))) return join(folder, bin)
  return undefined
}

/** The version a command prints for `--version`, or undefined. */
async function versionOf(bin: string): Promise<string | undefined> {
  try {
    const { stdout } = await execFileAsync(bin, ['--version'], { timeout: 60_000 })
    return /\d+\.\d+\.\d+[0-9A-Za-z.+-]*/.exec(stdout)?.[0]
  } catch {
    return undefined
  }
}

/**
 * The agent of a spec: the version asked for (`latest`: the registry's newest), installed into the cache
 * folder; else the one on PATH (its `--version`); else the driver's pinned version from the cache folder,
 * installed if need be.
 */
export async function resolveAgent(spec: AgentSpec): Promise<ResolvedAgent> {
  const pinned = AGENT_DRIVERS[spec.name]
  if (spec.version === undefined) {
    const found = onPath(pinned.bin)
    const version = found === undefined ? undefined : await versionOf(found)
    if (found !== undefined && version !== undefined)
      return { driver: { ...pinned, version }, bin: found, version, source: 'path' }
  }
  const version = spec.version === LATEST ? await latestVersion(pinned) : (spec.version ?? pinned.version)
  const driver = { ...pinned, version }
  return { driver, bin: await installedAgent(driver), version, source: 'cache' }
}

/** The end of what a failed step printed: its last non-empty line, clipped. */
function lastLine(text: string): string {
  const line =
    text
      .trim()
      .split('\n')
      .filter((part) => part.trim() !== '')
      .at(-1) ?? ''
  return line.length > 200 ? `${line.slice(0, 199)}…` : line
}

/** One agent through one scenario: its record for the side by side, and its rows. */
export async function runAgentScenario(
  agent: ResolvedAgent,
  scenario: AgentScenario,
  runId: string,
): Promise<AgentSessionRecord> {
  const { driver } = agent
  const base = {
    agent: driver.name,
    version: agent.version,
    source: agent.source,
    scenario: scenario.name,
    events: scenario.turns.map((turn) => (turn.before ?? []).map((event) => event.kind)),
  }
  const missing = notApplicable(driver, scenario)
  if (missing.length > 0)
    return {
      ...base,
      status: 'n/a',
      rows: [],
      turnOf: [],
      refusals: [],
      note: missing.map((entry) => `${entry.event}: ${entry.reason}`).join('; '),
    }
  const bench = await startAgentBench()
  try {
    const session = await bench.session(driver.name, {
      bin: agent.bin,
      setup: ({ workspace }) => {
        for (const [path, text] of Object.entries(scenario.workspace ?? {})) {
          mkdirSync(dirname(join(workspace, path)), { recursive: true })
          writeFileSync(join(workspace, path), text)
        }
      },
    })
    let options: AgentOptions = {}
    const rules: ReplyRuleInput[] = []
    const turnOf: number[] = []
    let note: string | undefined
    for (const [index, turn] of planTurns(driver, scenario).entries()) {
      if (turn.idleSeconds > 0) bench.server.context?.advance(turn.idleSeconds)
      for (const file of [...(turn.memory === undefined ? [] : [turn.memory]), ...turn.files]) {
        mkdirSync(dirname(join(session.place.workspace, file.path)), { recursive: true })
        writeFileSync(join(session.place.workspace, file.path), file.text)
      }
      const latest = bench.exchanges.findLast((exchange) => exchange.kind === 'main' && exchange.usage)
      const autoCompactTokens =
        turn.autoCompactAbove === undefined || latest?.usage === undefined
          ? undefined
          : latest.usage.input + turn.autoCompactAbove
      if (turn.addMcp || autoCompactTokens !== undefined) {
        options = {
          ...options,
          ...(turn.addMcp
            ? { mcpServers: [...(options.mcpServers ?? []), cachelabMcpServer(session.place.home)] }
            : {}),
          ...(autoCompactTokens !== undefined ? { autoCompactTokens } : {}),
        }
        session.configure(options)
      }
      if (turn.replies.length > 0) {
        rules.push(...turn.replies)
        bench.reply(rules)
      }
      for (const step of [...turn.preludes, turn.step]) {
        const outcome = await session.step(step)
        if (outcome.code !== 0) {
          note = `turn ${index + 1} (${JSON.stringify(step.prompt)}): exited ${outcome.code ?? 'on its timeout'}: ${lastLine(outcome.stderr) || lastLine(outcome.stdout)}`
          break
        }
      }
      while (turnOf.length < bench.exchanges.length) turnOf.push(index + 1)
      if (note !== undefined) break
    }
    const agentLabel = `${driver.name}/${agent.version}`
    const rows = captureRows(bench.exchanges, { runId, scenario: scenario.name }).map(
      (row): StepRow => (row.agent === undefined ? { ...row, agent: agentLabel } : row),
    )
    return {
      ...base,
      status: note === undefined ? 'ok' : 'failed',
      rows,
      turnOf,
      refusals: bench.refusals(),
      ...(note !== undefined ? { note } : {}),
    }
  } finally {
    await bench.close()
  }
}

export interface AgentsRunOptions {
  agents: readonly AgentSpec[]
  scenarios: readonly AgentScenario[]
  /** The run folder. */
  out: string
  /** Told of each session as it starts and ends. */
  onProgress?: (line: string) => void
  /** Run one shard's cells (agent × scenario) and write its blob into `out` for `merge-reports`. */
  shard?: ShardOptions
}

export interface AgentsRunResult {
  runId: string
  outDir: string
  agents: AgentRow[]
  rows: StepRow[]
  /** The terminal block. */
  lines: string[]
}

/** An agent as `--agent` named it: `opencode`, `opencode@1.18.33`. */
function specLabel(spec: AgentSpec): string {
  return spec.version === undefined ? spec.name : `${spec.name}@${spec.version}`
}

/** A cell of an agents run: `<agent>.<scenario>`, the agent as `--agent` named it. */
function cellOf(spec: AgentSpec, scenario: AgentScenario): string {
  return `${specLabel(spec)}.${scenario.name}`
}

/**
 * Run every agent through every scenario, one after the other, and write the run folder; a shard runs its
 * cells (balanced by the scenarios' turns, every session alone with its serve) and writes its blob.
 */
export async function runAgents(options: AgentsRunOptions): Promise<AgentsRunResult> {
  const { shard } = options
  if (shard !== undefined && shard.sharedId === undefined) throw noSharedRunId('--agent')
  const runId = `agents-${shard?.sharedId ?? runStamp()}`
  const outDir = resolve(options.out)
  const cells = options.scenarios.flatMap((scenario) =>
    options.agents.map((spec, agent) => ({ scenario, agent, cell: cellOf(spec, scenario) })),
  )
  const assigned =
    shard === undefined
      ? undefined
      : assignShards(
          cells.map((cell) => ({ cost: cell.scenario.turns.length, group: cell.cell })),
          shard.count,
        )
  const mine = cells.filter((_, index) => assigned === undefined || assigned[index] === shard?.index)
  const resolved = new Map<number, ResolvedAgent>()
  for (const [index, spec] of options.agents.entries())
    if (mine.some((cell) => cell.agent === index)) resolved.set(index, await resolveAgent(spec))
  const records: AgentSessionRecord[] = []
  for (const { scenario, agent: index } of mine) {
    const agent = resolved.get(index) as ResolvedAgent
    options.onProgress?.(`${agent.driver.name} ${agent.version}: ${scenario.name}…`)
    const record = await runAgentScenario(agent, scenario, runId)
    options.onProgress?.(
      `${agent.driver.name} ${agent.version}: ${scenario.name} ${record.status}, ${record.rows.length} requests`,
    )
    records.push(record)
  }
  if (shard === undefined) return writeAgentsRun(outDir, runId, records)
  const folder = RunFolder.replace(outDir, {
    writer: `run --agent --shard ${shardLabel(shard)}`,
    files: [SHARD_FILE],
  })
  try {
    folder.write(
      SHARD_FILE,
      shardText({
        format: SHARD_FORMAT,
        version: SHARD_VERSION,
        kind: 'agents',
        shard: { index: shard.index, count: shard.count },
        cachelab: cachelabVersion(),
        runId,
        digests: agentsDigests(options),
        cells: cells.map((cell) => cell.cell),
        where: { ...shard.where },
        files: [],
        sessions: mine.map((cell, index) => ({
          cell: cell.cell,
          record: records[index] as AgentSessionRecord,
        })),
      }),
    )
    folder.complete()
  } catch (error) {
    folder.abandon()
    throw error
  }
  const agents = compareAgents(records)
  return {
    runId,
    outDir,
    agents,
    rows: records.flatMap((record) => record.rows),
    lines: agentsSummaryLines(agents),
  }
}

/** What tells agents runs apart for `merge-reports`: the catalog, the agent scenarios, the agents asked for. */
export function agentsDigests(options: Pick<AgentsRunOptions, 'agents' | 'scenarios'>): {
  catalog: string
  scenarios: string
  options: string
} {
  return {
    catalog: digestOf(catalogEntries()),
    scenarios: digestOf(options.scenarios),
    options: digestOf(options.agents.map(specLabel)),
  }
}

/** The side by side of the sessions' records and their rows, written into a run folder. */
export function writeAgentsRun(
  outDir: string,
  runId: string,
  records: readonly AgentSessionRecord[],
): AgentsRunResult {
  const agents = compareAgents(records)
  const rows = records.flatMap((record) => record.rows)
  writeRunFiles(outDir, {
    runId,
    rows,
    scenarios: [],
    agents,
    files: { 'agents.csv': agentsCsv(agents), 'agent-steps.csv': stepsCsv(rows) },
  })
  return { runId, outDir, agents, rows, lines: agentsSummaryLines(agents) }
}
