// Test tiers: `default` (unit and mocked end-to-end, no network) is `npm test`; `keyed` runs the
// request-cache e2e against real providers, or against `cachelab serve` on loopback.
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'default',
          include: ['{harness,providers,scenarios,reports,bin}/**/*.test.ts'],
          exclude: ['**/*.keyed.test.ts', 'node_modules/**'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
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
    ],
  },
})
