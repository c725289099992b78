// opencode (`opencode run`, `--continue`): an OpenAI-compatible provider in the workspace's
// `opencode.json` pointed at the server, its homes under the scratch home, auto-update, sharing, the
// models.dev fetch and LSP downloads off.

import { join } from 'node:path'
import type { AgentDriver } from './types.ts'
import { PLACEHOLDER_KEY } from './types.ts'

export const opencode: AgentDriver = {
  name: 'opencode',
  package: 'opencode-ai',
  version: '1.18.33',
  bin: 'opencode',
  // Its OpenAI-compatible provider sends `max_tokens`, which GPT-5 models refuse.
  defaultModel: 'gpt-4.1',
  capabilities: {
    memoryFile: 'AGENTS.md',
    switchModel: 'gpt-4.1-mini',
    compact: {
      unsupported:
        '`opencode run` takes the custom commands of a workspace only; compaction is the TUI /compact or automatic at the context limit',
    },
    subagent: {
      tool: 'task',
      arguments: { description: 'Explore', prompt: 'List the files', subagent_type: 'general' },
    },
    mcp: true,
  },
  files(place, urls, options) {
    const model = options.model ?? opencode.defaultModel
    // Both models are declared from the start, so a switch names one the provider has.
    const models = [...new Set([model, opencode.capabilities.switchModel])]
    const config = {
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      model: `cachelab/${model}`,
      provider: {
        cachelab: {
          npm: '@ai-sdk/openai-compatible',
          name: 'cachelab',
          options: { baseURL: urls.openai, apiKey: PLACEHOLDER_KEY },
          models: Object.fromEntries(
            models.map((id) => [id, { name: id, limit: { context: 400000, output: 32000 } }]),
          ),
        },
      },
      ...((options.mcpServers ?? []).length > 0
        ? {
            mcp: Object.fromEntries(
              (options.mcpServers ?? []).map((server) => [
                server.name,
                { type: 'local', command: [server.command, ...server.args], enabled: true },
              ]),
            ),
          }
        : {}),
    }
    return [{ path: join(place.workspace, 'opencode.json'), text: `${JSON.stringify(config, null, 2)}\n` }]
  },
  command(place, _urls, step) {
    return {
      args: [
        'run',
        '--auto',
        '--format',
        'json',
        ...(step.continues === true ? ['--continue'] : []),
        ...(step.model !== undefined ? ['-m', `cachelab/${step.model}`] : []),
        step.prompt,
      ],
      env: {
        XDG_CONFIG_HOME: join(place.home, '.config'),
        XDG_DATA_HOME: join(place.home, '.local', 'share'),
        XDG_CACHE_HOME: join(place.home, '.cache'),
        XDG_STATE_HOME: join(place.home, '.local', 'state'),
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      },
    }
  },
}
