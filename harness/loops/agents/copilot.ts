// GitHub Copilot CLI (`copilot -p`, `--continue`, `--resume ID`): bring-your-own-key by environment
// variables (`COPILOT_PROVIDER_*`), which needs no GitHub login, on the Responses wire (the Messages wire for
// a Claude model); offline mode, so nothing but the provider is asked (no login, telemetry or update check);
// its native package unpacked once into the agents cache rather than into every scratch home (235 MB).
// It sends no session id, and its `prompt_cache_key` changes with the model: the session of its place is
// sent as `x-cachelab-session` (its `COPILOT_PROVIDER_HEADERS`), so a model switch stays in the session.
// See notes/2026-12-08-copilot-cli.md.

import { join } from 'node:path'
import { hashString } from '../../random.ts'
import { agentsCache } from './install.ts'
import type { AgentDriver, AgentOptions, ServerUrls } from './types.ts'
import { PLACEHOLDER_KEY } from './types.ts'

/** The provider a model is sent to: Copilot's `anthropic` type for a Claude model, OpenAI's Responses API otherwise. */
function providerOf(model: string, urls: ServerUrls): Record<string, string> {
  return model.startsWith('claude-')
    ? { COPILOT_PROVIDER_TYPE: 'anthropic', COPILOT_PROVIDER_BASE_URL: urls.anthropic }
    : {
        COPILOT_PROVIDER_TYPE: 'openai',
        COPILOT_PROVIDER_BASE_URL: urls.openai,
        COPILOT_PROVIDER_WIRE_API: 'responses',
      }
}

export const copilot: AgentDriver = {
  name: 'copilot',
  package: '@github/copilot',
  version: '1.0.102',
  bin: 'copilot',
  defaultModel: 'gpt-5.4',
  capabilities: {
    memoryFile: 'AGENTS.md',
    switchModel: 'gpt-5.4-mini',
    compact: { prompt: '/compact' },
    subagent: {
      tool: 'task',
      arguments: {
        description: 'Explore the files',
        prompt: 'List the files',
        agent_type: 'explore',
        name: 'explorer',
      },
    },
    mcp: true,
  },
  files(place, _urls, options) {
    return mcpFiles(place.home, options)
  },
  command(place, urls, step, options) {
    const model = step.model ?? options.model ?? copilot.defaultModel
    return {
      args: [
        '-p',
        step.prompt,
        '-s',
        '--allow-all',
        '--no-auto-update',
        '--disable-client-telemetry',
        ...(step.resume !== undefined
          ? [`--resume=${step.resume}`]
          : step.continues === true
            ? ['--continue']
            : []),
        ...(step.model !== undefined ? ['--model', step.model] : []),
      ],
      env: {
        ...providerOf(model, urls),
        COPILOT_PROVIDER_API_KEY: PLACEHOLDER_KEY,
        COPILOT_MODEL: options.model ?? copilot.defaultModel,
        COPILOT_OFFLINE: 'true',
        COPILOT_AUTO_UPDATE: 'false',
        COPILOT_PKG_CACHE_HOME: join(agentsCache(), 'copilot-unpacked'),
        COPILOT_PROVIDER_HEADERS: `x-cachelab-session: ${placeSession(place.workspace)}`,
      },
    }
  },
}

/** The capture's name for the sessions of a workspace: `copilot-` and a hash of its path. */
export function placeSession(workspace: string): string {
  return `copilot-${hashString(workspace).toString(16).padStart(8, '0')}`
}

/** `~/.copilot/mcp-config.json` listing the MCP servers, where there are any. */
function mcpFiles(home: string, options: AgentOptions) {
  const servers = options.mcpServers ?? []
  if (servers.length === 0) return []
  const config = {
    mcpServers: Object.fromEntries(
      servers.map((server) => [
        server.name,
        { type: 'local', command: server.command, args: server.args, tools: ['*'] },
      ]),
    ),
  }
  return [{ path: join(home, '.copilot', 'mcp-config.json'), text: `${JSON.stringify(config, null, 2)}\n` }]
}
