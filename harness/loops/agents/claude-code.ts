// Claude Code (`claude -p`): the Anthropic Messages API at `ANTHROPIC_BASE_URL`, telemetry, error
// reports, auto-update and nonessential traffic off. Tools are allowed by name (`--allowedTools`): as
// root, print mode refuses to skip permissions.

import type { AgentDriver } from './types.ts'
import { PLACEHOLDER_KEY } from './types.ts'

export const claudeCode: AgentDriver = {
  name: 'claude-code',
  package: '@anthropic-ai/claude-code',
  version: '2.1.328',
  bin: 'claude',
  defaultModel: 'claude-opus-5-5',
  files: () => [],
  command(_place, urls, step, options) {
    const model = step.model ?? options.model
    return {
      args: [
        '-p',
        step.prompt,
        '--output-format',
        'json',
        '--allowedTools',
        'Read,Glob,Grep,Agent,Bash',
        ...(step.continues === true ? ['--continue'] : []),
        ...(model !== undefined ? ['--model', model] : []),
      ],
      env: {
        ANTHROPIC_BASE_URL: urls.anthropic,
        ANTHROPIC_API_KEY: PLACEHOLDER_KEY,
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_ERROR_REPORTING: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
    }
  },
}
