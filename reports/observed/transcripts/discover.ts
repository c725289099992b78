// Where each agent keeps its transcripts under a user's home, so `cachelab import` needs no path: the
// standard folders of Claude Code, Codex, Copilot CLI, Factory Droid (its log), Gemini CLI, opencode, Kilo Code,
// qwen-code, pi and Cline, each agent's own location variables first (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`,
// `COPILOT_HOME`, `FACTORY_HOME_OVERRIDE`, `QWEN_HOME`, `PI_CODING_AGENT_DIR`, `XDG_DATA_HOME`, `KILO_DB`,
// `CLINE_SESSION_DATA_DIR`, `CLINE_DATA_DIR`, `CLINE_DIR`). DSH keeps its logs wherever its host puts them: it
// needs a path.

import { existsSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'

/** The agents whose transcripts `cachelab import` finds on its own. */
export const DISCOVERED_AGENTS = [
  'claude-code',
  'codex',
  'droid',
  'gemini-cli',
  'opencode',
  'qwen-code',
  'pi',
  'kilo',
  'copilot',
  'cline',
] as const

export type DiscoveredAgent = (typeof DISCOVERED_AGENTS)[number]

/** One place an agent keeps transcripts. */
export interface AgentFolder {
  agent: DiscoveredAgent
  /** A folder of transcript files, or a database file (opencode, Kilo Code). */
  path: string
}

/** Where every agent would keep its transcripts, by its variables and the home folder; existing or not. */
export function agentFolders(env: Readonly<Record<string, string | undefined>>, home: string): AgentFolder[] {
  const set = (name: string) => {
    const value = env[name]
    return value !== undefined && value !== '' ? value : undefined
  }
  const claude = set('CLAUDE_CONFIG_DIR')
  const codex = set('CODEX_HOME') ?? join(home, '.codex')
  const data = set('XDG_DATA_HOME') ?? join(home, '.local', 'share')
  return [
    // Claude Code: each folder of CLAUDE_CONFIG_DIR (a comma-separated list), else its old and new defaults.
    ...(claude !== undefined
      ? claude.split(',').map((folder) => folder.trim())
      : [join(home, '.config', 'claude'), join(home, '.claude')]
    )
      .filter((folder) => folder !== '')
      .map((folder) => ({ agent: 'claude-code' as const, path: join(folder, 'projects') })),
    { agent: 'codex', path: join(codex, 'sessions') },
    { agent: 'codex', path: join(codex, 'archived_sessions') },
    // Factory Droid: its log holds the usage its session files lack (droid.ts).
    { agent: 'droid', path: join(set('FACTORY_HOME_OVERRIDE') ?? home, '.factory', 'logs') },
    { agent: 'gemini-cli', path: join(home, '.gemini', 'tmp') },
    { agent: 'opencode', path: join(data, 'opencode', 'opencode.db') },
    { agent: 'qwen-code', path: join(set('QWEN_HOME') ?? join(home, '.qwen'), 'projects') },
    { agent: 'pi', path: join(set('PI_CODING_AGENT_DIR') ?? join(home, '.pi', 'agent'), 'sessions') },
    // Kilo Code's database, unless KILO_DB names another (a path, or a name in its data folder).
    { agent: 'kilo', path: kiloDatabase(set('KILO_DB'), join(data, 'kilo')) },
    { agent: 'copilot', path: join(set('COPILOT_HOME') ?? join(home, '.copilot'), 'session-state') },
    {
      agent: 'cline',
      path:
        set('CLINE_SESSION_DATA_DIR') ??
        join(set('CLINE_DATA_DIR') ?? join(set('CLINE_DIR') ?? join(home, '.cline'), 'data'), 'sessions'),
    },
  ]
}

/** The folders that exist, of the agents asked for (all when none is named). */
export function discoveredFolders(
  env: Readonly<Record<string, string | undefined>>,
  home: string,
  agents: readonly DiscoveredAgent[] = DISCOVERED_AGENTS,
): AgentFolder[] {
  return agentFolders(env, home).filter((folder) => agents.includes(folder.agent) && existsSync(folder.path))
}

/** Kilo Code's database: `KILO_DB` as Kilo 7.7.7 takes it (absolute, or a name in its data folder), else `kilo.db`. */
function kiloDatabase(configured: string | undefined, folder: string): string {
  if (configured === undefined) return join(folder, 'kilo.db')
  return isAbsolute(configured) ? configured : join(folder, configured)
}
