// Coding agents as loops: each agent's real CLI, driven headless against `cachelab serve`, one file per
// agent. A driver knows only its agent: the npm package and version to run, how to write its settings
// into a scratch home and workspace pointing at the server, and the command line of a step (a prompt,
// a continued session, a model switch). Installing and running processes is install.ts and process.ts.

/** The agents cachelab drives. */
export const AGENT_NAMES = [
  'claude-code',
  'codex',
  'gemini-cli',
  'opencode',
  'qwen-code',
  'pi',
  'copilot',
  'cline',
  'kilo',
] as const

export type AgentName = (typeof AGENT_NAMES)[number]

/** The base URLs of the server an agent is pointed at, by vendor prefix (`…/anthropic`, `…/openai/v1`). */
export interface ServerUrls {
  anthropic: string
  openai: string
  gemini: string
}

/** Where one agent session runs: a scratch home (its settings, sessions, transcripts) and a workspace. */
export interface AgentPlace {
  home: string
  workspace: string
}

/** One step of an agent session: a prompt, typed in a new process. */
export interface AgentStep {
  prompt: string
  /** Continue the latest session of the workspace (`--continue`, `resume --last`, …) instead of a new one. */
  continues?: boolean
  /**
   * Continue this session (the agent's id of it) rather than the latest: Claude Code `--resume ID`, Codex
   * `exec resume ID` (whose latest may be a subagent's thread). Claude Code and Codex only.
   */
  resume?: string
  /** With `resume`, go on in a new session that starts from it: Claude Code's `--fork-session`. */
  fork?: boolean
  /** Run the step on this model (the agent's own switch). */
  model?: string
}

/** A file the driver writes before the agent first runs: settings, a provider pointing at the server. */
export interface AgentFile {
  /** Absolute path. */
  path: string
  text: string
}

/** How to run one step: the program's arguments and its environment (over a clean one). */
export interface AgentCommand {
  args: string[]
  env: Record<string, string>
}

/** The options a session of an agent takes beside the server. */
export interface AgentOptions {
  /** The model the session starts on; the driver's default otherwise. */
  model?: string
  /** Codex: the context size at which it compacts the conversation on its own. */
  autoCompactTokens?: number
  /** MCP servers the agent's configuration lists (an MCP server added mid-session: the files written again). */
  mcpServers?: readonly McpServer[]
}

/** An MCP server on stdio, as agents' configurations name one: a command and its arguments. */
export interface McpServer {
  name: string
  command: string
  args: readonly string[]
}

/** What an agent cannot do headless, by scenario event: the reason is reported as n/a, never skipped. */
export type Unsupported = { unsupported: string }

/**
 * What a driver can do between turns of a scenario, and how: the memory file it reads, the model it is
 * switched to, how it compacts, how it starts a subagent, whether it takes MCP servers.
 */
export interface AgentCapabilities {
  /** The memory file it reads from the workspace (`CLAUDE.md`, `AGENTS.md`, …), relative to it. */
  memoryFile: string
  /** The model a model switch moves to: one the catalog has, on the agent's wire. */
  switchModel: string
  /**
   * Compaction: a prompt the agent takes as its compact command (`/compact`), or a context limit set
   * before the next turn, this many tokens above the session's latest request, so that turn compacts on
   * its own once it grows past it (Codex, which has no command in `exec`).
   */
  compact: { prompt: string } | { autoCompactAbove: number } | Unsupported
  /** The tool call that starts a subagent of its own. */
  subagent: { tool: string; arguments: Record<string, unknown> } | Unsupported
  /** Whether `files`/`command` honour `AgentOptions.mcpServers`. */
  mcp: true | Unsupported
  /**
   * Set when the agent cannot resume a session whose turn ended in tool calls (the provider refuses what
   * it resends): the turns before a resume are answered in text, and this says why.
   */
  resumeAfterTools?: Unsupported
  /**
   * Set when the agent cannot continue a session headless at all (Cline): every scenario of more than one
   * turn is n/a with this reason.
   */
  continues?: Unsupported
}

export interface AgentDriver {
  name: AgentName
  /** The npm package and the version pinned for `npm run test:agents`. */
  package: string
  version: string
  /** The command the package installs (`node_modules/.bin/<bin>`). */
  bin: string
  /** The model a session runs on unless told otherwise: one the catalog has, on the wire the agent speaks. */
  defaultModel: string
  /** What it can do between turns, and how. */
  capabilities: AgentCapabilities
  /** The files that configure the agent for a session against `urls`. */
  files(place: AgentPlace, urls: ServerUrls, options: AgentOptions): AgentFile[]
  /** The command line and environment of one step. */
  command(place: AgentPlace, urls: ServerUrls, step: AgentStep, options: AgentOptions): AgentCommand
  /**
   * The agent's interactive interface, where it has one worth driving (terminal.ts): the command that
   * starts it in the session's place and the files it needs first (onboarding done, the key accepted, the
   * workspace trusted), so it opens on its prompt.
   */
  interactive?(
    place: AgentPlace,
    urls: ServerUrls,
    options: AgentOptions,
  ): { command: AgentCommand; files: AgentFile[] }
}

/** A placeholder key: every server answers a non-empty one; nothing real is ever needed or sent. */
export const PLACEHOLDER_KEY = 'sk-cachelab-placeholder-0000'
