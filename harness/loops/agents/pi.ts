// pi (`pi -p`, `-c`): a custom provider in `~/.pi/agent/models.json` on the Anthropic Messages API at the
// server (the way pi's README reaches a proxy), install telemetry off, offline.

import { join } from 'node:path'
import type { AgentDriver } from './types.ts'
import { PLACEHOLDER_KEY } from './types.ts'

export const pi: AgentDriver = {
  name: 'pi',
  package: '@mariozechner/pi-coding-agent',
  version: '0.73.1',
  bin: 'pi',
  defaultModel: 'claude-sonnet-4-6',
  capabilities: {
    memoryFile: 'AGENTS.md',
    switchModel: 'claude-haiku-4-5',
    compact: { unsupported: 'its print mode (`-p`) takes a prompt, not its interactive /compact' },
    subagent: { unsupported: 'pi has no subagents (by design: extensions instead)' },
    mcp: { unsupported: 'pi has no MCP support (by design: extensions instead)' },
  },
  files(place, urls, options) {
    const model = options.model ?? pi.defaultModel
    const ids = [...new Set([model, pi.capabilities.switchModel])]
    const models = {
      providers: {
        cachelab: {
          baseUrl: urls.anthropic,
          api: 'anthropic-messages',
          apiKey: PLACEHOLDER_KEY,
          models: ids.map((id) => ({
            id,
            reasoning: true,
            input: ['text'],
            contextWindow: 200000,
            maxTokens: 32000,
          })),
        },
      },
    }
    return [
      { path: join(place.home, '.pi', 'agent', 'models.json'), text: `${JSON.stringify(models, null, 2)}\n` },
      {
        path: join(place.home, '.pi', 'agent', 'settings.json'),
        text: '{ "enableInstallTelemetry": false }\n',
      },
    ]
  },
  command(_place, _urls, step, options) {
    const model = step.model ?? options.model ?? pi.defaultModel
    return {
      args: ['--model', `cachelab/${model}`, ...(step.continues === true ? ['-c'] : []), '-p', step.prompt],
      env: { PI_OFFLINE: '1' },
    }
  },
}
