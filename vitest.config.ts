// Test tiers: `default` (unit and mocked end-to-end, no network) is `npm test`; `keyed` runs the
// request-cache e2e against real providers, or against `cachelab serve` on loopback; `agents` drives the
// real coding agents (installed at pinned versions into a cache folder) against a loopback serve.
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'default',
          include: ['{harness,providers,scenarios,reports,bin}/**/*.test.ts'],
          exclude: ['**/*.keyed.test.ts', '**/*.agents.test.ts', 'node_modules/**'],
          // Room, not a target (speed lives in `npm run bench`): enough for the longest test on a loaded
          // 2-core machine, still an end to one that hangs.
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          name: 'keyed',
          include: ['{harness,providers,scenarios,reports,bin}/**/*.keyed.test.ts'],
          testTimeout: 600_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'agents',
          include: ['scenarios/agents/**/*.agents.test.ts'],
          // Room, not a target: an agent's install is minutes, a session of cold-starting CLIs on a loaded
          // 2-core machine a few more. One file at a time: each agent takes a core.
          testTimeout: 1_800_000,
          hookTimeout: 1_800_000,
          fileParallelism: false,
        },
      },
    ],
  },
})
