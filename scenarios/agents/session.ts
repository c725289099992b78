// Agent sessions against one loopback `serve` (simulated providers, every request placed and recorded,
// serve's default memory budget), each in a scratch home and workspace, the agent the one given or its
// pinned version installed into the cache folder. What the agents sent becomes the same rows `cachelab
// report` makes.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  AGENT_DRIVERS,
  type AgentName,
  type AgentOptions,
  type AgentPlace,
  type AgentStep,
  type AgentTerminal,
  installedAgent,
  runAgentStep,
  type ServerUrls,
  type StepOutcome,
  startTerminal,
  writeAgentFiles,
} from '../../harness/loops/agents/index.ts'
import type { ClockState } from '../../providers/mock/control.ts'
import { type LoopbackServer, startLoopback } from '../../providers/mock/loopback.ts'
import { DEFAULT_MEMORY_BUDGET_MB, planMemory } from '../../providers/mock/memory-budget.ts'
import { type ReplyRuleInput, repliesFromRules } from '../../providers/mock/reply-file.ts'
import { CacheSimulators } from '../../providers/sim/index.ts'
import type { CapturedExchange } from '../../providers/wire/exchange.ts'
import { errorMessageOf } from '../../providers/wire/output.ts'
import { captureRows } from '../../reports/capture-rows.ts'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import type { StepRow } from '../../reports/types.ts'

/**
 * The versions the agents suite runs instead of the pins, as `NAME@VERSION,…`: `npm run test:agents --
 * --latest` sets it to the registry's newest (bin/test-agents.ts).
 */
export const AGENT_VERSIONS_VARIABLE = 'CACHELAB_AGENT_VERSIONS'

/** The version of an agent the suite runs: the one `CACHELAB_AGENT_VERSIONS` names, else the driver's pin. */
export function agentVersion(name: AgentName, env: NodeJS.ProcessEnv = process.env): string {
  for (const part of (env[AGENT_VERSIONS_VARIABLE] ?? '').split(',')) {
    const at = part.lastIndexOf('@')
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return AGENT_DRIVERS[name].version
}

/** How long one step of an agent may take before it is killed: room for a cold start on a loaded machine. */
export const STEP_TIMEOUT_MS = 240_000

/** One agent session: its place on disk, and its steps, each a new process. */
export interface AgentSession {
  name: AgentName
  /** The agent's version that runs (`agentVersion`, unless the session was given a command of its own). */
  version: string
  place: AgentPlace
  /** Every step run so far, in order, with how it ended. */
  outcomes: StepOutcome[]
  /** Run one step; resolves once the agent's process has exited. */
  step(step: AgentStep): Promise<StepOutcome>
  /** Change the session's options from the next step on, its files written again (an MCP server added). */
  configure(options: AgentOptions): void
  /** Start the agent's interactive interface in the session's place (a driver that has one). */
  terminal(): AgentTerminal
}

/** How a session starts beside its options: a setup of its place, a place of its own, the agent's command. */
export type SessionOptions = AgentOptions & {
  setup?: (place: AgentPlace) => void
  place?: AgentPlace
  /** The agent's command; the driver's pinned version, installed into the cache folder, otherwise. */
  bin?: string
  /** Point the agent elsewhere on the server (an Anthropic-compatible vendor's prefix for `anthropic`). */
  urls?: Partial<ServerUrls>
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
  /**
   * Move the server's virtual clock `seconds` on the documented way, `POST /cachelab/clock`; resolves with
   * its answer (the virtual time now).
   */
  advance(seconds: number): Promise<ClockState>
  /** Why each request the server did not answer with a 200 failed: empty when every request was served. */
  refusals(): string[]
  /**
   * A session of an agent run step by step; a step whose agent exits with anything but 0 is an error
   * carrying the end of what it printed on stderr.
   */
  run(name: AgentName, steps: readonly AgentStep[], options?: SessionOptions): Promise<AgentSession>
  /**
   * A new session of an agent in its own scratch home and workspace (the agent installed if need be), or
   * in `place` when given: several agents can share one home, as they do on a user's machine.
   */
  session(name: AgentName, options?: SessionOptions): Promise<AgentSession>
  close(): Promise<void>
}

/** Start a bench whose simulated model answers by `replies` (a replies file's rules), else by default. */
export async function startAgentBench(replies: readonly ReplyRuleInput[] = []): Promise<AgentBench> {
  const root = mkdtempSync(join(tmpdir(), 'cachelab-agents-'))
  const exchanges: CapturedExchange[] = []
  // As `cachelab serve` runs: its default memory budget shared among the tries, the memo and the sessions.
  const memory = planMemory(DEFAULT_MEMORY_BUDGET_MB)
  const linearizer = new CacheSimulators({ counter: memory.counter })
  const tracker = new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    keepBodies: true,
    shadow: new CacheSimulators({ counter: memory.counter }),
    memoryBytes: memory.trackerBytes,
    sink: (exchange) => exchanges.push(exchange),
  })
  const server = await startLoopback({
    upstream: 'sim',
    port: 0,
    capture: tracker,
    simulator: { counter: memory.counter, memoryBytes: memory.simulatorBytes },
    memoryBudgetBytes: memory.budgetBytes,
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
    async advance(seconds) {
      const response = await fetch(`${server.url}/cachelab/clock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ advance: seconds }),
      })
      if (response.status !== 200)
        throw new Error(`POST /cachelab/clock answered ${response.status}: ${await response.text()}`)
      return (await response.json()) as ClockState
    },
    refusals: () =>
      exchanges
        .filter((exchange) => exchange.status !== 200)
        .map((exchange) => {
          const reason = exchange.error ?? String(exchange.status)
          // The API's own words, from the kept response (the mock's refusal: never a key).
          const message = exchange.response === undefined ? undefined : errorMessageOf(exchange.response)
          return message === undefined ? reason : `${reason}: ${message}`
        }),
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
      const driver = { ...AGENT_DRIVERS[name], version: agentVersion(name) }
      const bin = options.bin ?? (await installedAgent(driver))
      sessions += 1
      const base = join(root, `${name}-${sessions}`)
      const place: AgentPlace = options.place ?? {
        home: join(base, 'home'),
        workspace: join(base, 'workspace'),
      }
      let current: AgentOptions = options
      const mine: ServerUrls = { ...urls, ...options.urls }
      writeAgentFiles(place, driver.files(place, mine, current))
      options.setup?.(place)
      const outcomes: StepOutcome[] = []
      return {
        name,
        version: driver.version,
        place,
        outcomes,
        async step(step) {
          const outcome = await runAgentStep(
            bin,
            place,
            driver.command(place, mine, step, current),
            STEP_TIMEOUT_MS,
          )
          outcomes.push(outcome)
          return outcome
        },
        configure(next) {
          current = next
          writeAgentFiles(place, driver.files(place, mine, current))
        },
        terminal() {
          if (driver.interactive === undefined)
            throw new Error(`${name} has no interactive interface cachelab drives`)
          const { command, files } = driver.interactive(place, mine, current)
          writeAgentFiles(place, files)
          return startTerminal(bin, place, command)
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
