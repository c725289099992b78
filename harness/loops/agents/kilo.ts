// Kilo Code (`kilo run`, `--continue`), an opencode fork driven as opencode is (opencode-family.ts): the
// server as an OpenAI-compatible provider in the workspace's `kilo.json`, the only provider enabled (no
// Kilo gateway model fetch), its homes under the scratch home; auto-update, sharing, session ingest, the
// models fetch, LSP downloads and PostHog telemetry off, and no attaching to a running Kilo daemon.
// Every variable is one the 7.7.7 binary reads (notes/2026-12-08-kilo-code.md).

import { join } from 'node:path'
import { providerConfig, runArgs, xdgHomes } from './opencode-family.ts'
import type { AgentDriver } from './types.ts'

export const kilo: AgentDriver = {
  name: 'kilo',
  package: '@kilocode/cli',
  // 7.8.1 is the newest published, but its linux-x64 binary packages are not on the registry this was
  // measured against: its install fails (notes/2026-12-08-kilo-code.md).
  version: '7.7.7',
  bin: 'kilo',
  // The OpenAI-compatible provider of the AI SDK, as opencode's: `max_tokens`, which GPT-5 models refuse.
  defaultModel: 'gpt-4.1',
  capabilities: {
    memoryFile: 'AGENTS.md',
    switchModel: 'gpt-4.1-mini',
    compact: {
      unsupported:
        '`kilo run` takes the custom commands of a workspace only; compaction is the TUI /compact or automatic at the context limit',
    },
    subagent: {
      tool: 'task',
      arguments: { description: 'Explore', prompt: 'List the files', subagent_type: 'general' },
    },
    mcp: true,
  },
  files(place, urls, options) {
    const config = {
      $schema: 'https://app.kilo.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      enabled_providers: ['cachelab'],
      ...providerConfig(
        urls.openai,
        options.model ?? kilo.defaultModel,
        kilo.capabilities.switchModel,
        options.mcpServers,
      ),
    }
    return [{ path: join(place.workspace, 'kilo.json'), text: `${JSON.stringify(config, null, 2)}\n` }]
  },
  command(place, _urls, step) {
    return {
      args: runArgs(step),
      env: {
        ...xdgHomes(place),
        KILO_DISABLE_AUTOUPDATE: '1',
        KILO_DISABLE_MODELS_FETCH: '1',
        KILO_DISABLE_SHARE: '1',
        KILO_DISABLE_SESSION_INGEST: '1',
        KILO_DISABLE_LSP_DOWNLOAD: '1',
        // Anything but `all` turns its PostHog client off.
        KILO_TELEMETRY_LEVEL: 'off',
        KILO_NO_DAEMON: '1',
      },
    }
  },
}
