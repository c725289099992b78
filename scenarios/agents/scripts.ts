// Agent scenarios: scripts of user prompts with workspace and world events between turns, the same for
// every agent; each driver says how it does an event (its memory file, its model switch, its compact
// command, its subagent tool, its MCP settings) or why it cannot headless (n/a with the reason). Every
// turn is a new process of the agent (headless agents take one prompt a process): turns after the first
// continue the session, so a turn without an event of its own is a resume.

import type { AgentDriver, AgentStep } from '../../harness/loops/agents/index.ts'
import type { ReplyRuleInput } from '../../providers/mock/reply-file.ts'

/** What happens between two turns. */
export type AgentEvent =
  /** The agent's memory file (CLAUDE.md, AGENTS.md, …) written or rewritten in the workspace. */
  | { kind: 'memory-edit'; text: string }
  /** Another file written into the workspace (one the agent lists in its context, if it lists any). */
  | { kind: 'workspace-file'; path: string; text: string }
  /** cachelab's MCP server added to the agent's settings. */
  | { kind: 'mcp-add' }
  /** The next turn runs on the driver's switch model. */
  | { kind: 'model-switch' }
  /** The conversation compacted: the agent's compact command, or a context limit the next turn passes. */
  | { kind: 'compact' }
  /** Idle time on the server's virtual clock (past a cache lifetime), before the next turn. */
  | { kind: 'idle'; seconds: number }
  /** The next turn's answer starts the agent's subagent. */
  | { kind: 'subagent' }

export type AgentEventKind = AgentEvent['kind']

/** One turn: the events before it, then its prompt. */
export interface AgentTurn {
  prompt: string
  before?: readonly AgentEvent[]
}

export interface AgentScenario {
  name: string
  description: string
  /** Files the workspace holds before the first turn, by path relative to it. */
  workspace?: Readonly<Record<string, string>>
  turns: readonly AgentTurn[]
}

const WORKSPACE = {
  'README.md': '# Calc\nA tiny calculator.\n',
  'src/calc.js': 'export const add = (a, b) => a + b\n',
}

/** The length of a turn answered in text instead of a file read (an agent that cannot resume after tools). */
const TEXT_TURN_TOKENS = 600

/** Two turns to warm the cache before the event, one after it. */
const around = (name: string, description: string, event: AgentEvent): AgentScenario => ({
  name,
  description,
  workspace: WORKSPACE,
  turns: [
    { prompt: 'What does README.md say?' },
    { prompt: 'And src/calc.js?' },
    { prompt: 'Summarize both in one line', before: [event] },
  ],
})

/** The built-in agent scenarios, by name. */
export const AGENT_SCENARIOS: readonly AgentScenario[] = [
  {
    name: 'resume',
    description: 'three turns, each a new process continuing the session: what resuming does',
    workspace: WORKSPACE,
    turns: [{ prompt: 'What does README.md say?' }, { prompt: 'And src/calc.js?' }, { prompt: 'Thanks' }],
  },
  around('memory-edit', "the agent's memory file written before turn 3, a resume", {
    kind: 'memory-edit',
    text: '# Project notes\nAlways answer in one sentence.\n',
  }),
  around('new-file', 'a new file in the workspace before turn 3, a resume', {
    kind: 'workspace-file',
    path: 'NOTES.md',
    text: '# Notes\nWritten between two turns.\n',
  }),
  around('mcp-add', "cachelab's MCP server (one tool) added before turn 3", { kind: 'mcp-add' }),
  around('model-switch', "turn 3 on the agent's second model, a resume", { kind: 'model-switch' }),
  around('compaction', 'the conversation compacted before turn 3', { kind: 'compact' }),
  around('idle', 'two idle hours on the virtual clock before turn 3', { kind: 'idle', seconds: 7200 }),
  around('subagent', "turn 3's answer starts the agent's subagent", { kind: 'subagent' }),
]

/** The scenario of that name, or undefined. */
export function agentScenario(name: string): AgentScenario | undefined {
  return AGENT_SCENARIOS.find((scenario) => scenario.name === name)
}

/** Why a driver cannot do an event headless, or undefined when it can. */
export function unsupportedReason(driver: AgentDriver, event: AgentEvent): string | undefined {
  const { capabilities } = driver
  switch (event.kind) {
    case 'compact':
      return 'unsupported' in capabilities.compact ? capabilities.compact.unsupported : undefined
    case 'subagent':
      return 'unsupported' in capabilities.subagent ? capabilities.subagent.unsupported : undefined
    case 'mcp-add':
      return capabilities.mcp === true ? undefined : capabilities.mcp.unsupported
    default:
      return undefined
  }
}

/**
 * Every event of the scenario the driver cannot do, with the reason: the scenario is n/a for it. A driver
 * that cannot continue a session headless cannot run a scenario's second turn: `resume`.
 */
export function notApplicable(
  driver: AgentDriver,
  scenario: AgentScenario,
): Array<{ event: AgentEventKind | 'resume'; reason: string }> {
  const { continues } = driver.capabilities
  if (continues !== undefined && scenario.turns.length > 1)
    return [{ event: 'resume', reason: continues.unsupported }]
  return scenario.turns.flatMap((turn) =>
    (turn.before ?? []).flatMap((event) => {
      const reason = unsupportedReason(driver, event)
      return reason === undefined ? [] : [{ event: event.kind, reason }]
    }),
  )
}

/** What the events of a turn change, for the driver: the step to run and what to do before it. */
export interface PlannedTurn {
  /** The step (its prompt, continued or not, on which model). */
  step: AgentStep
  /** Steps run first, in the same session (a compact command). */
  preludes: AgentStep[]
  /** The memory file to write first (relative to the workspace), with its text. */
  memory?: { path: string; text: string }
  /** Other files to write into the workspace first (relative to it), with their texts. */
  files: Array<{ path: string; text: string }>
  /** Add cachelab's MCP server to the settings first. */
  addMcp: boolean
  /**
   * Set a context limit this many tokens above the latest request's input in the settings first (a
   * compaction the turn does on its own).
   */
  autoCompactAbove?: number
  /** Seconds of idle time on the virtual clock first. */
  idleSeconds: number
  /** Reply rules that apply from this turn on. */
  replies: ReplyRuleInput[]
  /** The events, as they are named in the report. */
  events: AgentEventKind[]
}

/**
 * The turns of a scenario for one driver. The model stays switched once switched (the agent's own
 * setting carries over). Only for a scenario the driver can run (`notApplicable` empty).
 */
export function planTurns(driver: AgentDriver, scenario: AgentScenario): PlannedTurn[] {
  const { capabilities } = driver
  let model: string | undefined
  return scenario.turns.map((turn, index) => {
    const planned: PlannedTurn = {
      step: { prompt: turn.prompt, ...(index > 0 ? { continues: true } : {}) },
      preludes: [],
      files: [],
      addMcp: false,
      idleSeconds: 0,
      replies: [],
      events: (turn.before ?? []).map((event) => event.kind),
    }
    for (const event of turn.before ?? []) {
      if (event.kind === 'memory-edit') planned.memory = { path: capabilities.memoryFile, text: event.text }
      else if (event.kind === 'workspace-file') planned.files.push({ path: event.path, text: event.text })
      else if (event.kind === 'mcp-add') planned.addMcp = true
      else if (event.kind === 'model-switch') model = capabilities.switchModel
      else if (event.kind === 'idle') planned.idleSeconds += event.seconds
      else if (event.kind === 'compact') {
        const compact = capabilities.compact
        if ('prompt' in compact)
          planned.preludes.push({
            prompt: compact.prompt,
            continues: true,
            ...(model !== undefined ? { model } : {}),
          })
        else if ('autoCompactAbove' in compact) planned.autoCompactAbove = compact.autoCompactAbove
      } else if (event.kind === 'subagent') {
        const subagent = capabilities.subagent
        if ('tool' in subagent)
          planned.replies.push({
            kind: 'main',
            user: turn.prompt,
            step: 1,
            tools: [{ name: subagent.tool, arguments: subagent.arguments }],
          })
      }
    }
    if (model !== undefined) planned.step = { ...planned.step, model }
    // An agent that cannot resume after tool calls gets its turns before a resume answered in text, as
    // long as a turn that reads a file would be.
    if (capabilities.resumeAfterTools !== undefined && index < scenario.turns.length - 1)
      planned.replies.push({ kind: 'main', user: turn.prompt, text: { tokens: TEXT_TURN_TOKENS } })
    return planned
  })
}
