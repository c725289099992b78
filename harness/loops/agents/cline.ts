// Cline's CLI (`cline --json PROMPT`): its Anthropic provider in `~/.cline/data/settings/providers.json`
// with the server as base URL (its `auth` command takes a base URL for OpenAI-compatible providers only;
// the file takes one for Anthropic too), telemetry and auto-update off in `global-settings.json`, MCP
// servers in `cline_mcp_settings.json`, and its sessions run in the process itself, not in the background
// hub daemon it otherwise starts and leaves running. It cannot continue a session headless: `--id` opens
// its interactive interface and drops the prompt. See notes/2026-12-08-cline.md.

import { join } from 'node:path'
import { CachelabError } from '../../errors.ts'
import type { AgentDriver, AgentPlace } from './types.ts'
import { PLACEHOLDER_KEY } from './types.ts'

/** Where Cline keeps its settings and sessions under the home (`CLINE_DATA_DIR` otherwise). */
const dataDir = (place: AgentPlace) => join(place.home, '.cline', 'data')

/** When the provider settings were written: Cline ignores a provider entry without it. */
const WRITTEN_AT = '2026-01-01T00:00:00.000Z'

export const cline: AgentDriver = {
  name: 'cline',
  package: 'cline',
  version: '3.0.65',
  bin: 'cline',
  defaultModel: 'claude-sonnet-4-6',
  capabilities: {
    memoryFile: 'AGENTS.md',
    switchModel: 'claude-haiku-4-5',
    compact: {
      unsupported:
        '`cline --json` takes one prompt and cannot continue a session; /compact is its interactive command',
    },
    subagent: { tool: 'spawn_agent', arguments: { systemPrompt: 'You list files.', task: 'List the files' } },
    mcp: true,
    continues: {
      unsupported:
        '`cline --json` cannot continue a session: `--id` opens its interactive interface and drops the prompt ("JSON output mode requires a prompt argument or piped stdin")',
    },
  },
  files(place, urls, options) {
    const settings = join(dataDir(place), 'settings')
    const providers = {
      version: 1,
      lastUsedProvider: 'anthropic',
      modes: {},
      providers: {
        anthropic: {
          settings: {
            provider: 'anthropic',
            apiKey: PLACEHOLDER_KEY,
            model: options.model ?? cline.defaultModel,
            baseUrl: urls.anthropic,
          },
          updatedAt: WRITTEN_AT,
          tokenSource: 'manual',
        },
      },
    }
    const servers = options.mcpServers ?? []
    return [
      { path: join(settings, 'providers.json'), text: `${JSON.stringify(providers, null, 2)}\n` },
      {
        path: join(settings, 'global-settings.json'),
        text: `${JSON.stringify({ telemetryOptOut: true, autoUpdateEnabled: false }, null, 2)}\n`,
      },
      ...(servers.length > 0
        ? [
            {
              path: join(settings, 'cline_mcp_settings.json'),
              text: `${JSON.stringify(
                {
                  mcpServers: Object.fromEntries(
                    servers.map((server) => [server.name, { command: server.command, args: server.args }]),
                  ),
                },
                null,
                2,
              )}\n`,
            },
          ]
        : []),
    ]
  },
  command(_place, _urls, step, options) {
    if (step.continues === true || step.resume !== undefined)
      throw new CachelabError('usage', `cline: ${cline.capabilities.continues?.unsupported ?? ''}`)
    return {
      args: ['--json', '--model', step.model ?? options.model ?? cline.defaultModel, step.prompt],
      // The session runs in this process: the hub daemon would outlive the step (and its timeout).
      env: { CLINE_SESSION_BACKEND_MODE: 'local' },
    }
  },
}
