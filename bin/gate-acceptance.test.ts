// The gate against whole runs: a cliff one step deep in the long session, and a scenario whose point
// vanishes when a catalog rule changes. Runs go through the same loop, SDK, mock and simulator as
// `cachelab run`, and their files are written the way it writes them.

import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockProviders, startMockProviders } from '../providers/index.ts'
import type { StepRow } from '../reports/types.ts'
import { findScenario } from '../scenarios/index.ts'
import { runSession, type SessionPlan } from '../scenarios/run.ts'
import { writeRunFiles } from '../scenarios/run-files.ts'
import type { Scenario } from '../scenarios/types.ts'
import { runCli } from './testing.ts'

let mock: MockProviders
beforeAll(() => {
  mock = startMockProviders()
})
afterAll(() => mock.close())

/** Run every variant of `scenario` on `provider` and write the run's files into a fresh directory. */
async function runDirectory(
  scenario: Scenario,
  provider: SessionPlan['provider'],
  rules?: object,
): Promise<string> {
  const rows: StepRow[] = []
  for (const variant of scenario.variants) {
    const planned = rules === undefined ? variant : { ...variant, rules: { ...variant.rules, ...rules } }
    const result = await runSession(
      { scenario, variant: planned, provider },
      { runId: 'acceptance', stream: false, mock },
    )
    rows.push(...result.rows)
  }
  const dir = mkdtempSync(join(tmpdir(), `cachelab-${scenario.name}-`))
  writeRunFiles(dir, { runId: 'acceptance', rows, scenarios: [scenario] })
  return dir
}

function scenarioNamed(name: string): Scenario {
  const scenario = findScenario(name)
  if (scenario === undefined) throw new Error(`no scenario ${name}`)
  return scenario
}

describe('the gate on whole runs', () => {
  it('fails when a system-prompt rewrite at turn 700 of the long session breaks one step, and holds unmodified', async () => {
    const longSession = scenarioNamed('long-session')
    const baseline = await runDirectory(longSession, 'anthropic')
    const script = [...longSession.script]
    script.splice(700, 0, {
      kind: 'set-system',
      text: 'You are a careful agent. The release branch is frozen.',
    })
    const rewritten = await runDirectory({ ...longSession, script }, 'anthropic')

    const same = await runCli(['check', '--baseline', baseline, '--out', baseline])
    expect(same.code).toBe(0)
    const result = await runCli(['check', '--baseline', baseline, '--out', rewritten])
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(
      /FAIL {2}new break: long-session · default · anthropic 701\.1: system-replace at system\[0\] \(event \d+\), [\d,]{6,} tokens lost \(\$\d+\.\d{4}\)/,
    )
    // docs/gate.md shows this failure: its FAIL lines are the ones printed here, figures and all.
    const shown = readFileSync(new URL('../docs/gate.md', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('FAIL  long-session'))
    expect(shown).not.toHaveLength(0)
    for (const line of shown) expect(result.stdout.split('\n')).toContain(line)
  }, 900_000)

  it('fails through the claim when a catalog change stops idle-ttl/ttl-5m from expiring', async () => {
    const idleTtl = scenarioNamed('idle-ttl')
    const baseline = await runDirectory(idleTtl, 'anthropic')
    expect((await runCli(['check', '--baseline', baseline, '--out', baseline])).code).toBe(0)
    // A 5-minute lifetime of an hour: the 6-minute pause no longer expires anything.
    const unexpiring = await runDirectory(idleTtl, 'anthropic', { ttlSeconds: { '5m': 3600, '1h': 3600 } })
    const result = await runCli(['check', '--baseline', baseline, '--out', unexpiring])
    expect(result.code).toBe(1)
    expect(result.stdout).toContain('FAIL  claim failed: idle-ttl on anthropic: With a 5-minute lifetime')
    expect(result.stdout).toContain('Observed: no ttl-expired break after the gap')
  }, 900_000)
})
