// A bench for real coding agents: one loopback `serve` (simulated providers, every request placed and
// recorded), and agent sessions against it, each in a scratch home and workspace with the pinned agent
// installed into the cache folder. What the agents sent becomes the same rows `cachelab report` makes.

import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import {
  AGENT_DRIVERS,
  type AgentName,
  type AgentOptions,
  type AgentPlace,
  type AgentStep,
  installedAgent,
  runAgentStep,
  type ServerUrls,
  type StepOutcome,
  writeAgentFiles,
} from '../../harness/loops/agents/index.ts'
import { type LoopbackServer, startLoopback } from '../../providers/mock/loopback.ts'
import { type ReplyRuleInput, repliesFromRules } from '../../providers/mock/reply-file.ts'
import { CacheSimulators } from '../../providers/sim/index.ts'
import type { CapturedExchange } from '../../providers/wire/exchange.ts'
import { captureRows } from '../../reports/capture-rows.ts'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import { parseStepsCsv } from '../../reports/parse.ts'
import type { StepRow } from '../../reports/types.ts'

const execFileAsync = promisify(execFile)

/** What `cachelab import` made of an agent's own session files. */
export interface Imported {
  rows: StepRow[]
  /** What it printed on stdout and stderr. */
  stdout: string
  stderr: string
}

/**
 * `cachelab import` as a user runs it: with no path, in the session's home (none of the agents' location
 * variables set), so it finds the agent's folders on its own; or of the paths given.
 */
export async function importAgentSession(place: AgentPlace, args: readonly string[] = []): Promise<Imported> {
  const out = mkdtempSync(join(tmpdir(), 'cachelab-agents-import-'))
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      [join(process.cwd(), 'bin', 'cachelab.js'), 'import', ...args, '--out', out],
      {
        env: { PATH: process.env.PATH ?? '', HOME: place.home, NO_COLOR: '1' },
        maxBuffer: 64 * 1024 * 1024,
      },
    )
    const rows = parseStepsCsv(readFileSync(join(out, 'steps.csv'), 'utf8'), 'steps.csv')
    return { rows, stdout, stderr }
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

/**
 * Each conversation's requests as `model input/read/write/output`, in order: what an import of the
 * agent's transcript must give exactly as the capture of the same session did.
 */
export function usageByConversation(rows: readonly StepRow[]): Record<string, string[]> {
  const found: Record<string, string[]> = {}
  for (const row of rows) {
    if (!row.ok) continue
    const list = found[row.variant] ?? []
    list.push(
      `${row.model} ${row.inputTokens}/${row.cacheReadTokens}/${row.cacheWriteTokens}/${row.outputTokens}`,
    )
    found[row.variant] = list
  }
  return found
}

/** How long one step of an agent may take before it is killed: room for a cold start on a loaded machine. */
export const STEP_TIMEOUT_MS = 240_000

/** One agent session: its place on disk, and its steps, each a new process. */
export interface AgentSession {
  name: AgentName
  place: AgentPlace
  /** Every step run so far, in order, with how it ended. */
  outcomes: StepOutcome[]
  /** Run one step; resolves once the agent's process has exited. */
  step(step: AgentStep): Promise<StepOutcome>
}

export interface AgentBench {
  server: LoopbackServer
  urls: ServerUrls
  /** Every request the agents sent, placed and answered, in order. */
  exchanges: CapturedExchange[]
  /** The rows of what was captured, as `cachelab report` gives them. */
  rows(): StepRow[]
  /** Answer from now on by these rules (a replies file's), e.g. once a session's workspace path is known. */
  reply(rules: readonly ReplyRuleInput[]): void
  /** Why each request the server did not answer with a 200 failed: empty when every request was served. */
  refusals(): string[]
  /**
   * A session of an agent run step by step; a step whose agent exits with anything but 0 is an error
   * carrying the end of what it printed on stderr.
   */
  run(
    name: AgentName,
    steps: readonly AgentStep[],
    options?: AgentOptions & { setup?: (place: AgentPlace) => void; place?: AgentPlace },
  ): Promise<AgentSession>
  /**
   * A new session of an agent in its own scratch home and workspace (the agent installed if need be), or
   * in `place` when given: several agents can share one home, as they do on a user's machine.
   */
  session(
    name: AgentName,
    options?: AgentOptions & { setup?: (place: AgentPlace) => void; place?: AgentPlace },
  ): Promise<AgentSession>
  close(): Promise<void>
}

/** Start a bench whose simulated model answers by `replies` (a replies file's rules), else by default. */
export async function startAgentBench(replies: readonly ReplyRuleInput[] = []): Promise<AgentBench> {
  const root = mkdtempSync(join(tmpdir(), 'cachelab-agents-'))
  const exchanges: CapturedExchange[] = []
  const linearizer = new CacheSimulators()
  const tracker = new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    keepBodies: true,
    sink: (exchange) => exchanges.push(exchange),
  })
  const server = await startLoopback({
    upstream: 'sim',
    port: 0,
    capture: tracker,
    ...(replies.length > 0 ? { replies: repliesFromRules(replies) } : {}),
  })
  const urls: ServerUrls = {
    anthropic: server.baseURLs.anthropic,
    openai: server.baseURLs.openai,
    gemini: server.baseURLs.gemini,
  }
  let sessions = 0
  const bench: AgentBench = {
    server,
    urls,
    exchanges,
    rows: () => captureRows(exchanges, { runId: 'agents', scenario: 'agents' }),
    reply(rules) {
      if (server.context !== undefined) server.context.replies = repliesFromRules(rules)
    },
    refusals: () =>
      exchanges
        .filter((exchange) => exchange.status !== 200)
        .map((exchange) => exchange.error ?? String(exchange.status)),
    async run(name, steps, options = {}) {
      const session = await bench.session(name, options)
      for (const step of steps) {
        const outcome = await session.step(step)
        if (outcome.code !== 0)
          throw new Error(
            `${name} exited ${outcome.code ?? 'on its timeout'} on ${JSON.stringify(step.prompt)}: ${outcome.stderr.slice(-2000)}`,
          )
      }
      return session
    },
    async session(name, options = {}) {
      const driver = AGENT_DRIVERS[name]
      const bin = await installedAgent(driver)
      sessions += 1
      const base = join(root, `${name}-${sessions}`)
      const place: AgentPlace = options.place ?? {
        home: join(base, 'home'),
        workspace: join(base, 'workspace'),
      }
      writeAgentFiles(place, driver.files(place, urls, options))
      options.setup?.(place)
      const outcomes: StepOutcome[] = []
      return {
        name,
        place,
        outcomes,
        async step(step) {
          const outcome = await runAgentStep(
            bin,
            place,
            driver.command(place, urls, step, options),
            STEP_TIMEOUT_MS,
          )
          outcomes.push(outcome)
          return outcome
        },
      }
    },
    async close() {
      await server.close()
      rmSync(root, { recursive: true, force: true })
    },
  }
  return bench
}
