// Codex CLI (`codex exec`, `codex exec resume --last`): a model provider in `$CODEX_HOME/config.toml` on
// the Responses wire at the server, analytics, feedback, update checks and OpenTelemetry off, one retry.

import { join } from 'node:path'
import type { AgentDriver } from './types.ts'
import { PLACEHOLDER_KEY } from './types.ts'

export const codex: AgentDriver = {
  name: 'codex',
  package: '@openai/codex',
  version: '0.169.0',
  bin: 'codex',
  defaultModel: 'gpt-5.4',
  capabilities: {
    memoryFile: 'AGENTS.md',
    switchModel: 'gpt-5.4-mini',
    // `codex exec` has no compact command: a context limit just over the latest request's, set before a
    // turn, makes the turn compact once it grows past it (under it, Codex compacts again and again).
    compact: { autoCompactAbove: 40 },
    subagent: { tool: 'spawn_agent', arguments: { message: 'Check the files here.' } },
    mcp: true,
  },
  files(place, urls, options) {
    const model = options.model ?? codex.defaultModel
    const lines = [
      `model = "${model}"`,
      'model_provider = "cachelab"',
      'check_for_update_on_startup = false',
      ...(options.autoCompactTokens !== undefined
        ? [`model_auto_compact_token_limit = ${options.autoCompactTokens}`]
        : []),
      '[model_providers.cachelab]',
      'name = "cachelab"',
      `base_url = "${urls.openai}"`,
      'env_key = "CACHELAB_AGENT_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 1',
      'stream_max_retries = 1',
      '[analytics]',
      'enabled = false',
      '[feedback]',
      'enabled = false',
      '[otel]',
      'exporter = "none"',
      ...(options.mcpServers ?? []).flatMap((server) => [
        `[mcp_servers.${server.name}]`,
        `command = ${JSON.stringify(server.command)}`,
        `args = [${server.args.map((arg) => JSON.stringify(arg)).join(', ')}]`,
      ]),
    ]
    return [{ path: join(place.home, '.codex', 'config.toml'), text: `${lines.join('\n')}\n` }]
  },
  command(place, _urls, step) {
    return {
      args: [
        'exec',
        '--skip-git-repo-check',
        '--dangerously-bypass-approvals-and-sandbox',
        '--json',
        ...(step.resume !== undefined
          ? ['resume', step.resume]
          : step.continues === true
            ? ['resume', '--last']
            : []),
        ...(step.model !== undefined ? ['-m', step.model] : []),
        step.prompt,
      ],
      env: { CODEX_HOME: join(place.home, '.codex'), CACHELAB_AGENT_KEY: PLACEHOLDER_KEY },
    }
  },
}
