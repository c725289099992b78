// The money of an import against an independent count: the six shared Claude Code samples priced by
// cachelab and by ccusage, the tool these users already run (its own bundled price table). The samples are
// others' data read in place (../shared/fixtures/transcripts/SOURCES.md); a clean clone has none and skips.

import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { importFiles } from './import.ts'
import { detectFormat, READERS } from './observed/transcripts/index.ts'
import type { ObservedRow } from './observed-rows.ts'

const SAMPLES = resolve('..', 'shared', 'fixtures', 'transcripts')
const FILES = [
  'claude-code-d-kimuson-inline-sidechains.jsonl',
  'claude-code-daaain-deep-manifest.jsonl',
  'claude-code-daaain-model-switch.jsonl',
  'claude-code-daaain-worktrees-main.jsonl',
  'claude-code-daaain-worktrees-subagent.jsonl',
  'claude-code-jimmc414-cctrace-phase0.jsonl',
]

/**
 * ccusage 20.0.24 on copies of the six files (`CLAUDE_CONFIG_DIR=<dir>`, one `projects/<name>/<file>`
 * each), `ccusage daily --json --breakdown --offline`, run 2026-12-03; its model breakdowns summed over the
 * days. Tokens: cache read, cache creation, input, output.
 */
const CCUSAGE = {
  version: '20.0.24',
  totalUsd: 24.06309305,
  models: {
    'claude-sonnet-4-20250514': {
      usd: 3.0669813,
      read: 4_836_166,
      write: 213_854,
      input: 943,
      output: 54_090,
    },
    'claude-opus-4-5-20251101': {
      usd: 16.7337235,
      read: 18_677_387,
      write: 797_332,
      input: 4266,
      output: 95_615,
    },
    'claude-opus-4-1-20250805': { usd: 1.0779, read: 39_660, write: 50_404, input: 24, output: 973 },
    'claude-opus-4-7': { usd: 3.18448825, read: 1_344_354, write: 215_958, input: 1753, output: 30_824 },
  } as Record<string, { usd: number; read: number; write: number; input: number; output: number }>,
}

describe.skipIf(!FILES.every((file) => existsSync(join(SAMPLES, file))))(
  `the shared Claude Code samples priced against ccusage ${CCUSAGE.version}`,
  () => {
    it('agree with it to the cent, in total and per model, on the same tokens, with no stand-in', async () => {
      const entries: ObservedRow[] = []
      await importFiles(
        FILES.map((file) => join(SAMPLES, file)),
        { readers: READERS, detect: detectFormat, format: 'auto', lenient: false },
        (entry) => entries.push(entry),
      )
      const models = new Map<
        string,
        { usd: number; read: number; write: number; input: number; output: number }
      >()
      for (const { row } of entries) {
        expect(row.simulatedAs, row.model).toBeUndefined()
        const sum = models.get(row.model) ?? { usd: 0, read: 0, write: 0, input: 0, output: 0 }
        sum.usd += row.costUsd
        sum.read += row.cacheReadTokens
        sum.write += row.cacheWriteTokens
        sum.input += row.uncachedTokens
        sum.output += row.outputTokens
        models.set(row.model, sum)
      }
      expect([...models.keys()].sort()).toEqual(Object.keys(CCUSAGE.models).sort())
      let total = 0
      for (const [model, sum] of models) {
        const theirs = CCUSAGE.models[model]
        expect({ ...sum, usd: 0 }, model).toEqual({ ...theirs, usd: 0 })
        expect(Math.abs(sum.usd - (theirs?.usd ?? Number.NaN)), model).toBeLessThan(0.005)
        total += sum.usd
      }
      expect(Math.abs(total - CCUSAGE.totalUsd)).toBeLessThan(0.005)
    })
  },
)
