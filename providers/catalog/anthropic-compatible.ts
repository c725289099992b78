// The vendors' Anthropic-compatible Messages APIs (the base URLs Claude Code is pointed at): each caches by
// prefix with its own numbers, ignores `cache_control`, and reports usage in Anthropic's shape. Sources and
// evidence: notes/2026-12-03-gateways.md.

import type { CompatibleProviderSpec } from './compatible-types.ts'

/** Anthropic's usage fields, as these endpoints return them (`input_tokens` is the uncached part). */
const ANTHROPIC_USAGE = { cacheRead: 'cache_read_input_tokens', cacheWrite: 'cache_creation_input_tokens' }

/** Documents read on 2026-12-03 unless dated otherwise. */
export const ANTHROPIC_COMPATIBLE: readonly CompatibleProviderSpec[] = [
  {
    id: 'deepseek-anthropic',
    name: 'DeepSeek (Anthropic API)',
    wire: 'messages',
    baseURL: 'https://api.deepseek.com/anthropic',
    keyVariable: 'DEEPSEEK_API_KEY',
    baseURLVariable: 'DEEPSEEK_ANTHROPIC_BASE_URL',
    cache: {
      minimumTokens: 64,
      granularityTokens: 64,
      ttlSeconds: 6 * 3600,
      routing: { kind: 'none' },
      usage: ANTHROPIC_USAGE,
      writes: 'free',
    },
    models: [
      { model: 'deepseek-flash', prices: { input: 0.3, cacheRead: 0.006, output: 1.2 } },
      { model: 'deepseek-v4-pro', prices: { input: 1.32, cacheRead: 0.044, output: 3.96 } },
    ],
    sources: [
      {
        url: 'https://api-docs.deepseek.com/guides/anthropic_api',
        date: '2026-12-03',
        says: 'base URL https://api.deepseek.com/anthropic; claude-opus* mapped to deepseek-v4-pro, other claude* to deepseek-flash',
      },
      {
        url: 'https://api-docs.deepseek.com/guides/kv_cache',
        date: '2026-12-03',
        says: 'disk cache on by default for every request; a hit needs a persisted prefix; legacy rules: 64-token storage unit',
      },
      {
        url: 'https://github.com/cairn/cairn/wiki/Provider-DeepSeek-zh',
        date: '2026-11-09',
        says: 'a client of the /anthropic endpoint: prefix caching is automatic, it sends no cache_control breakpoints (secondary)',
      },
    ],
    assumptions: [
      'matching: the 2024 rules (longest prefix in 64-token units), not the current whole-unit rules of the OpenAI-shaped API',
      'cache_control: ignored (shared/reference/providers.md C, secondary)',
      'usage: cache_read_input_tokens for hits, input_tokens for the rest, no cache writes',
      'prices: the deepseek provider’s peak-hour rates; a Claude model name is simulated as the default deepseek-flash',
      'billing block: cached as text (one report says DeepSeek strips it: lonr-6/cc-desktop-switch#39)',
    ],
  },
  {
    id: 'kimi-anthropic',
    name: 'Moonshot AI (Kimi, Anthropic API)',
    wire: 'messages',
    baseURL: 'https://api.moonshot.ai/anthropic',
    keyVariable: 'MOONSHOT_API_KEY',
    baseURLVariable: 'MOONSHOT_ANTHROPIC_BASE_URL',
    cache: {
      minimumTokens: 256,
      granularityTokens: 256,
      ttlSeconds: 300,
      routing: { kind: 'none' },
      usage: ANTHROPIC_USAGE,
      writes: 'free',
    },
    models: [{ model: 'kimi-k3', prices: { input: 3, cacheRead: 0.3, output: 15 } }],
    sources: [
      {
        url: 'https://kimi-k25.com/blog/kimi-k2-5-claude-code',
        date: '2026-12-03',
        says: 'Claude Code pointed at https://api.moonshot.ai/anthropic (/anthropic/v1/messages) (secondary)',
      },
      {
        url: 'https://raw.githubusercontent.com/Leechael/pi-provider-kimi-code/main/docs/caching.md',
        date: '2026-11-30',
        says: 'probe: prefix matching in 256-token chunks; prompt_cache_key and cache_control ignored (secondary)',
      },
    ],
    assumptions: [
      'the Anthropic endpoint shares the Chat API’s cache rules and kimi-k3 prices (the kimi provider’s)',
      'minimum: one 256-token chunk; lifetime: 5 minutes idle (neither published)',
    ],
  },
  {
    id: 'glm-anthropic',
    name: 'Z.ai (GLM, Anthropic API)',
    wire: 'messages',
    baseURL: 'https://api.z.ai/api/anthropic',
    keyVariable: 'ZAI_API_KEY',
    baseURLVariable: 'ZAI_ANTHROPIC_BASE_URL',
    cache: {
      minimumTokens: 1024,
      granularityTokens: 128,
      ttlSeconds: 300,
      routing: { kind: 'none' },
      usage: ANTHROPIC_USAGE,
      writes: 'free',
    },
    models: [{ model: 'glm-4.6', prices: { input: 0.6, cacheRead: 0.11, output: 2.2 } }],
    sources: [
      {
        url: 'https://docs.z.ai/guides/capabilities/cache',
        date: '2026-11-30',
        says: 'implicit caching on every mainstream model, no parameter to set',
      },
      {
        url: 'https://pypi.org/project/glm-launch/',
        date: '2026-12-03',
        says: 'Claude Code is run against Z.ai by environment variables alone (secondary; the base URL is Z.ai’s /api/anthropic)',
      },
    ],
    assumptions: [
      'base URL https://api.z.ai/api/anthropic (Z.ai’s Claude Code guide, not read here)',
      'cache_control: ignored (implicit caching only is documented)',
      'minimum 1024, 128-token steps, 5 minutes idle: OpenAI’s numbers (none published)',
    ],
  },
]
