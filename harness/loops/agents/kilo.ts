// Kilo Code (`kilo run`, `--continue`, `--command compact`), an opencode fork driven as opencode is (opencode-family.ts): the
// server as an OpenAI-compatible provider in the workspace's `kilo.json`, the only provider enabled (no
// Kilo gateway model fetch), its homes under the scratch home; auto-update, sharing, session ingest, the
// models fetch, LSP downloads and PostHog telemetry off, and no attaching to a running Kilo daemon.
// Every variable is one the 7.7.7 binary reads (notes/2026-12-08-kilo-code.md).

import { join } from 'node:path'
import { configText, PROVIDER_ID, runArgs, TASK_SUBAGENT, xdgHomes } from './opencode-family.ts'
import type { AgentDriver } from './types.ts'

/** The compact prompt of the agent scenarios, which the driver runs as Kilo's compact command. */
const COMPACT = '/compact'

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
    // `kilo run` takes its built-in compact command (`--command compact`), which opencode's `run` does not.
    compact: { prompt: COMPACT },
    subagent: TASK_SUBAGENT,
    mcp: true,
  },
  files(place, urls, options) {
    const head = {
      $schema: 'https://app.kilo.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      enabled_providers: [PROVIDER_ID],
    }
    const models = { defaultModel: kilo.defaultModel, switchModel: kilo.capabilities.switchModel }
    return [{ path: join(place.workspace, 'kilo.json'), text: configText(head, urls, options, models) }]
  },
  command(place, _urls, step) {
    return {
      args: runArgs(step, step.prompt === COMPACT ? 'compact' : undefined),
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
