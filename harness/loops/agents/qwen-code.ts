// qwen-code (`qwen -p`, `--continue`): OpenAI auth against `OPENAI_BASE_URL`, usage statistics, telemetry
// and auto-update off, managed memory on (its extraction subagent runs after a turn answered without a
// tool), `max_completion_tokens` sent instead of `max_tokens` (GPT-5 models refuse the latter), and its
// session id sent as `x-cachelab-session` (its `customHeaders` placeholder, which needs
// `allowDynamicHeaderValues`): the capture names the session as qwen-code's own transcript does.

import { join } from 'node:path'
import type { AgentDriver, McpServer } from './types.ts'
import { PLACEHOLDER_KEY } from './types.ts'

export const qwenCode: AgentDriver = {
  name: 'qwen-code',
  package: '@qwen-code/qwen-code',
  version: '0.24.4',
  bin: 'qwen',
  defaultModel: 'gpt-5.4',
  capabilities: {
    memoryFile: 'QWEN.md',
    switchModel: 'gpt-5.4-mini',
    compact: { prompt: '/compress' },
    subagent: {
      unsupported: 'its subagents are declared per project (`.qwen/agents`); none is set up headless',
    },
    mcp: true,
  },
  files(place, _urls, options) {
    const settings = {
      security: { auth: { selectedType: 'openai' } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false },
      memory: { enableManagedAutoMemory: true },
      model: {
        generationConfig: {
          samplingParams: { max_completion_tokens: 16000 },
          // qwen-code's placeholder, expanded by qwen-code per request.
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal is qwen-code's, not ours
          customHeaders: { 'x-cachelab-session': '${session_id}' },
        },
      },
      outboundCorrelation: { allowDynamicHeaderValues: true },
      ...mcpSettings(options.mcpServers),
    }
    return [
      { path: join(place.home, '.qwen', 'settings.json'), text: `${JSON.stringify(settings, null, 2)}\n` },
    ]
  },
  command(_place, urls, step, options) {
    return {
      args: [
        '-p',
        step.prompt,
        '--yolo',
        ...(step.continues === true ? ['--continue'] : []),
        ...(step.model !== undefined ? ['--model', step.model] : []),
      ],
      env: {
        OPENAI_BASE_URL: urls.openai,
        OPENAI_API_KEY: PLACEHOLDER_KEY,
        OPENAI_MODEL: options.model ?? qwenCode.defaultModel,
      },
    }
  },
}

/** `mcpServers` as qwen-code and Gemini CLI settings take them; nothing when there are none. */
export function mcpSettings(servers: readonly McpServer[] = []): { mcpServers?: Record<string, unknown> } {
  if (servers.length === 0) return {}
  return {
    mcpServers: Object.fromEntries(
      servers.map((server) => [server.name, { command: server.command, args: server.args, trust: true }]),
    ),
  }
}
