// opencode (`opencode run`, `--continue`): an OpenAI-compatible provider in the workspace's
// `opencode.json` pointed at the server, its homes under the scratch home, auto-update, sharing, the
// models.dev fetch and LSP downloads off. What Kilo Code shares with it is opencode-family.ts.

import { join } from 'node:path'
import { configText, runArgs, TASK_SUBAGENT, xdgHomes } from './opencode-family.ts'
import type { AgentDriver } from './types.ts'

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
    subagent: TASK_SUBAGENT,
    mcp: true,
  },
  files(place, urls, options) {
    const head = { $schema: 'https://opencode.ai/config.json', autoupdate: false, share: 'disabled' }
    const models = { defaultModel: opencode.defaultModel, switchModel: opencode.capabilities.switchModel }
    return [{ path: join(place.workspace, 'opencode.json'), text: configText(head, urls, options, models) }]
  },
  command(place, _urls, step) {
    return {
      args: runArgs(step),
      env: {
        ...xdgHomes(place),
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      },
    }
  },
}
