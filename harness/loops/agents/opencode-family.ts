// What opencode and its fork Kilo Code share as drivers: the same config schema (a custom provider on
// an AI SDK package, its models declared up front, local MCP servers), the same `run` command line and
// XDG homes. Each driver names only where it differs: its config file, its schema and its variables.

import { join } from 'node:path'
import type {
  AgentCapabilities,
  AgentOptions,
  AgentPlace,
  AgentStep,
  McpServer,
  ServerUrls,
} from './types.ts'
import { PLACEHOLDER_KEY } from './types.ts'

/** The provider id the config declares for the server. */
export const PROVIDER_ID = 'cachelab'

/**
 * The config fields both agents read: the server as an OpenAI-compatible provider with `models` declared
 * (both from the start, so a switch names one the provider has), and the MCP servers as local commands.
 */
function providerConfig(
  openaiUrl: string,
  model: string,
  switchModel: string,
  mcpServers: readonly McpServer[] = [],
): Record<string, unknown> {
  const models = [...new Set([model, switchModel])]
  return {
    model: `${PROVIDER_ID}/${model}`,
    provider: {
      [PROVIDER_ID]: {
        npm: '@ai-sdk/openai-compatible',
        name: PROVIDER_ID,
        options: { baseURL: openaiUrl, apiKey: PLACEHOLDER_KEY },
        models: Object.fromEntries(
          models.map((id) => [id, { name: id, limit: { context: 400000, output: 32000 } }]),
        ),
      },
    },
    ...(mcpServers.length > 0
      ? {
          mcp: Object.fromEntries(
            mcpServers.map((server) => [
              server.name,
              { type: 'local', command: [server.command, ...server.args], enabled: true },
            ]),
          ),
        }
      : {}),
  }
}

/** The subagent both start: their `task` tool on the built-in `general` agent. */
export const TASK_SUBAGENT: AgentCapabilities['subagent'] = {
  tool: 'task',
  arguments: { description: 'Explore', prompt: 'List the files', subagent_type: 'general' },
}

/**
 * The text of a config file: the agent's own fields (`head`: its schema, updates and sharing off) and then
 * the server's provider on the session's model, beside the switch model, with its MCP servers.
 */
export function configText(
  head: Record<string, unknown>,
  urls: ServerUrls,
  options: AgentOptions,
  models: { defaultModel: string; switchModel: string },
): string {
  const config = {
    ...head,
    ...providerConfig(
      urls.openai,
      options.model ?? models.defaultModel,
      models.switchModel,
      options.mcpServers,
    ),
  }
  return `${JSON.stringify(config, null, 2)}\n`
}

/**
 * `run --auto --format json`, continued (`--continue`) and on a model (`-m cachelab/<model>`) as asked,
 * with the step's prompt as the message, or a command of the agent's (`--command compact`) instead.
 */
export function runArgs(step: AgentStep, command?: string): string[] {
  return [
    'run',
    '--auto',
    '--format',
    'json',
    ...(step.continues === true ? ['--continue'] : []),
    ...(step.model !== undefined ? ['-m', `${PROVIDER_ID}/${step.model}`] : []),
    ...(command !== undefined ? ['--command', command] : [step.prompt]),
  ]
}

/** The XDG homes under the scratch home: the agent's config, data (its database), cache and state. */
export function xdgHomes(place: AgentPlace): Record<string, string> {
  return {
    XDG_CONFIG_HOME: join(place.home, '.config'),
    XDG_DATA_HOME: join(place.home, '.local', 'share'),
    XDG_CACHE_HOME: join(place.home, '.cache'),
    XDG_STATE_HOME: join(place.home, '.local', 'state'),
  }
}
