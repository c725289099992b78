import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { agentFolders, discoveredFolders } from './discover.ts'

describe('where the agents keep their transcripts', () => {
  it('follows each agent’s own location variables before its defaults', () => {
    const folders = agentFolders(
      {
        CLAUDE_CONFIG_DIR: '/a/claude, /b/claude',
        CODEX_HOME: '/c/codex',
        QWEN_HOME: '/q',
        PI_CODING_AGENT_DIR: '/p/agent',
        XDG_DATA_HOME: '/x',
        COPILOT_HOME: '/k',
        FACTORY_HOME_OVERRIDE: '/f',
        CLINE_DATA_DIR: '/k/data',
      },
      '/home/u',
    )
    expect(folders.map((folder) => `${folder.agent} ${folder.path}`)).toEqual([
      'claude-code /a/claude/projects',
      'claude-code /b/claude/projects',
      'codex /c/codex/sessions',
      'codex /c/codex/archived_sessions',
      'droid /f/.factory/logs',
      'gemini-cli /home/u/.gemini/tmp',
      'opencode /x/opencode/opencode.db',
      'qwen-code /q/projects',
      'pi /p/agent/sessions',
      'kilo /x/kilo/kilo.db',
      'copilot /k/session-state',
      'cline /k/data/sessions',
    ])
    const cline = (env: Record<string, string>) => agentFolders(env, '/home/u').at(-1)?.path
    expect(cline({})).toBe('/home/u/.cline/data/sessions')
    expect(cline({ CLINE_DIR: '/k' })).toBe('/k/data/sessions')
    expect(cline({ CLINE_DATA_DIR: '/d', CLINE_SESSION_DATA_DIR: '/s' })).toBe('/s')
  })

  it("finds Kilo Code's database where KILO_DB names it, a path or a name in its data folder", () => {
    const kilo = (env: Record<string, string>) =>
      agentFolders(env, '/home/u').find((folder) => folder.agent === 'kilo')?.path
    expect(kilo({})).toBe('/home/u/.local/share/kilo/kilo.db')
    expect(kilo({ KILO_DB: '/d/mine.db' })).toBe('/d/mine.db')
    expect(kilo({ XDG_DATA_HOME: '/x', KILO_DB: 'other.db' })).toBe('/x/kilo/other.db')
  })

  it('finds only what exists, of the agents asked for', () => {
    const home = mkdtempSync(join(tmpdir(), 'cachelab-home-'))
    mkdirSync(join(home, '.claude', 'projects'), { recursive: true })
    mkdirSync(join(home, '.pi', 'agent', 'sessions'), { recursive: true })
    mkdirSync(join(home, '.local', 'share', 'opencode'), { recursive: true })
    writeFileSync(join(home, '.local', 'share', 'opencode', 'opencode.db'), '')
    mkdirSync(join(home, '.local', 'share', 'kilo'), { recursive: true })
    writeFileSync(join(home, '.local', 'share', 'kilo', 'kilo.db'), '')
    expect(discoveredFolders({}, home).map((folder) => folder.agent)).toEqual([
      'claude-code',
      'opencode',
      'pi',
      'kilo',
    ])
    expect(discoveredFolders({}, home, ['pi']).map((folder) => folder.agent)).toEqual(['pi'])
  })
})
