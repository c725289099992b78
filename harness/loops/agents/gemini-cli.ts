// Gemini CLI (`gemini -p`, `--resume latest`): API-key auth against `GOOGLE_GEMINI_BASE_URL`, usage
// statistics, telemetry and auto-update off, the workspace trusted. Its model stays "auto" (routed)
// unless a step names one.

import { join } from 'node:path'
import { mcpSettings } from './qwen-code.ts'
import type { AgentDriver } from './types.ts'
import { PLACEHOLDER_KEY } from './types.ts'

export const geminiCli: AgentDriver = {
  name: 'gemini-cli',
  package: '@google/gemini-cli',
  version: '0.61.0',
  bin: 'gemini',
  defaultModel: 'auto',
  capabilities: {
    memoryFile: 'GEMINI.md',
    switchModel: 'gemini-2.5-flash',
    compact: { prompt: '/compress' },
    subagent: { unsupported: 'its subagents are experimental and off by default in this version' },
    mcp: true,
    // It resends a tool call's response twice on resume, which the API refuses with a 400 ("the number of
    // function response parts is equal to the number of function call parts"; google-gemini/gemini-cli#16543).
    resumeAfterTools: { unsupported: 'its resume resends two responses for one tool call (refused)' },
  },
  files(place, _urls, options) {
    const settings = {
      security: { auth: { selectedType: 'gemini-api-key' } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false, logPrompts: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      ...mcpSettings(options.mcpServers),
    }
    return [
      { path: join(place.home, '.gemini', 'settings.json'), text: `${JSON.stringify(settings, null, 2)}\n` },
    ]
  },
  command(_place, urls, step, options) {
    const model = step.model ?? options.model
    return {
      args: [
        '-p',
        step.prompt,
        '--yolo',
        ...(step.continues === true ? ['--resume', 'latest'] : []),
        ...(model !== undefined && model !== 'auto' ? ['-m', model] : []),
      ],
      env: {
        GOOGLE_GEMINI_BASE_URL: urls.gemini,
        GEMINI_API_KEY: PLACEHOLDER_KEY,
        GEMINI_CLI_TRUST_WORKSPACE: 'true',
      },
    }
  },
}
