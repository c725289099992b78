// What opencode and its fork Kilo Code share as drivers: the same config schema (a custom provider on
// an AI SDK package, its models declared up front, local MCP servers), the same `run` command line and
// XDG homes. Each driver names only where it differs: its config file, its schema and its variables.

import { join } from 'node:path'
import type { AgentPlace, AgentStep, McpServer } from './types.ts'
import { PLACEHOLDER_KEY } from './types.ts'

/** The provider id the config declares for the server. */
export const PROVIDER_ID = 'cachelab'

/**
 * The config fields both agents read: the server as an OpenAI-compatible provider with `models` declared
 * (both from the start, so a switch names one the provider has), and the MCP servers as local commands.
 */
export function providerConfig(
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

/** `run --auto --format json`, continued (`--continue`) and on a model (`-m cachelab/<model>`) as asked. */
export function runArgs(step: AgentStep): string[] {
  return [
    'run',
    '--auto',
    '--format',
    'json',
    ...(step.continues === true ? ['--continue'] : []),
    ...(step.model !== undefined ? ['-m', `${PROVIDER_ID}/${step.model}`] : []),
    step.prompt,
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
