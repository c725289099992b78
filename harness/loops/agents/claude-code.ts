// Claude Code (`claude -p`): the Anthropic Messages API at `ANTHROPIC_BASE_URL`, telemetry, error
// reports, auto-update and nonessential traffic off. Tools are allowed by name (`--allowedTools`): as
// root, print mode refuses to skip permissions.

import { join } from 'node:path'
import type { AgentDriver, AgentOptions, AgentPlace, ServerUrls } from './types.ts'
import { PLACEHOLDER_KEY } from './types.ts'

export const claudeCode: AgentDriver = {
  name: 'claude-code',
  package: '@anthropic-ai/claude-code',
  version: '2.1.328',
  bin: 'claude',
  defaultModel: 'claude-opus-5-5',
  capabilities: {
    memoryFile: 'CLAUDE.md',
    switchModel: 'claude-haiku-4-5',
    compact: { prompt: '/compact' },
    subagent: {
      tool: 'Agent',
      arguments: {
        description: 'Explore',
        subagent_type: 'Explore',
        prompt: 'List the files here.',
        run_in_background: false,
      },
    },
    mcp: true,
  },
  // MCP servers go in a file of their own, named by `--mcp-config` (print mode asks nothing of it).
  files: (place, _urls, options) =>
    (options.mcpServers ?? []).length === 0
      ? []
      : [{ path: mcpConfigPath(place), text: `${JSON.stringify(mcpConfig(options), null, 2)}\n` }],
  command(place, urls, step, options) {
    const model = step.model ?? options.model
    return {
      env: environment(urls),
      args: [
        '-p',
        step.prompt,
        '--output-format',
        'json',
        '--allowedTools',
        'Read,Glob,Grep,Agent,Bash',
        ...(step.resume !== undefined
          ? ['--resume', step.resume, ...(step.fork === true ? ['--fork-session'] : [])]
          : step.continues === true
            ? ['--continue']
            : []),
        ...(model !== undefined ? ['--model', model] : []),
        ...((options.mcpServers ?? []).length > 0 ? ['--mcp-config', mcpConfigPath(place)] : []),
      ],
    }
  },
  // The TUI: `~/.claude.json` says onboarding is done, the placeholder key was accepted (by its last 20
  // characters, as Claude Code keeps it) and the workspace trusted, so it opens on its prompt.
  interactive(place, urls, options) {
    const state = {
      hasCompletedOnboarding: true,
      customApiKeyResponses: { approved: [PLACEHOLDER_KEY.slice(-20)], rejected: [] },
      projects: { [place.workspace]: { hasTrustDialogAccepted: true, allowedTools: [] } },
    }
    return {
      command: {
        args: [
          ...(options.model !== undefined ? ['--model', options.model] : []),
          ...((options.mcpServers ?? []).length > 0 ? ['--mcp-config', mcpConfigPath(place)] : []),
        ],
        env: environment(urls),
      },
      files: [{ path: join(place.home, '.claude.json'), text: `${JSON.stringify(state, null, 2)}\n` }],
    }
  },
}

/** Claude Code's environment: the server, the placeholder key, telemetry, reports and updates off. */
const environment = (urls: ServerUrls) => ({
  ANTHROPIC_BASE_URL: urls.anthropic,
  ANTHROPIC_API_KEY: PLACEHOLDER_KEY,
  DISABLE_TELEMETRY: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_ERROR_REPORTING: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
})

const mcpConfigPath = (place: AgentPlace) => join(place.home, 'cachelab-mcp.json')

const mcpConfig = (options: AgentOptions) => ({
  mcpServers: Object.fromEntries(
    (options.mcpServers ?? []).map((server) => [
      server.name,
      { type: 'stdio', command: server.command, args: server.args },
    ]),
  ),
})
