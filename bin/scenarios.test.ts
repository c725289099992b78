import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PROVIDER_IDS } from '../harness/types.ts'
import { runCli } from './testing.ts'

const SUPPORT_BOT = 'scenarios/examples/support-bot.ts'
const CLOCK = 'scenarios/examples/clock-in-prompt.mjs'

const outDir = () => mkdtempSync(join(tmpdir(), 'cachelab-user-scenarios-'))

describe('cachelab run --scenarios', () => {
  it('runs the example on every provider of the simulator: rows, breaks, claims that hold, session logs', async () => {
    const out = outDir()
    const { code, stdout } = await runCli(['run', '--scenarios', SUPPORT_BOT, '--out', out, '--json'])
    expect(code).toBe(0)
    const report = JSON.parse(stdout)
    // Two variants and two claims, on every provider.
    expect(report.summary).toHaveLength(2 * PROVIDER_IDS.length)
    expect(report.claims).toHaveLength(2 * PROVIDER_IDS.length)
    expect(report.claims.filter((claim: { status: string }) => claim.status !== 'holds')).toEqual([])
    const steps = readFileSync(join(out, 'steps.csv'), 'utf8')
    // The rewritten head: Anthropic's system slot, the first message on OpenAI (where the shared instructions still hit).
    expect(steps).toMatch(/support-bot,status-in-system,anthropic,[^\n]*,system\[0\],\d+,system-replace,/)
    expect(steps).toMatch(/support-bot,status-in-system,openai-chat,[^\n]*,messages\[0\],\d+,system-replace,/)
    expect(readFileSync(join(out, 'claims.csv'), 'utf8')).toContain(
      'support-bot,deepseek,system-breaks-each-refresh',
    )
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('status-in-message')
    expect(readdirSync(join(out, 'sessions'))).toContain('support-bot.status-in-system.anthropic.jsonl')
  })

  it("covers only the user's scenarios unless --scenario names others; all is every scenario", async () => {
    const summaryOf = async (argv: string[]) => {
      const out = outDir()
      const { code, stdout } = await runCli([
        'run',
        ...argv,
        '--provider',
        'deepseek',
        '--out',
        out,
        '--json',
      ])
      expect(code).toBe(0)
      return new Set(JSON.parse(stdout).summary.map((row: { scenario: string }) => row.scenario))
    }
    expect(await summaryOf(['--scenarios', `${SUPPORT_BOT},${CLOCK}`])).toEqual(
      new Set(['support-bot', 'clock-in-prompt']),
    )
    expect(await summaryOf(['--scenarios', SUPPORT_BOT, '--scenario', 'support-bot,append-only'])).toEqual(
      new Set(['support-bot', 'append-only']),
    )
  })

  it('exits 2 with one line naming the file and the field of a bad scenario', async () => {
    const directory = outDir()
    const file = join(directory, 'bad.mjs')
    writeFileSync(
      file,
      `export default { name: 'bad', demonstrates: 'x', variants: [{ name: 'a', policies: { route: 'sideways' } }], system: 'x', tools: [], script: [], claims: [] }\n`,
    )
    const { code, stderr } = await runCli(['run', '--scenarios', file, '--out', directory])
    expect(code).toBe(2)
    expect(stderr).toMatch(
      /^cachelab: .*bad.mjs: scenario "bad": variants\[0\].policies.route: unknown value "sideways" \(expected one of: in-history, unsupported\) \(and 1 more problem\)\n$/,
    )
  })

  it('exits 2 for a name a built-in scenario already has', async () => {
    const directory = outDir()
    const file = join(directory, 'clash.mjs')
    const text = readFileSync(CLOCK, 'utf8').replace("name: 'clock-in-prompt'", "name: 'append-only'")
    writeFileSync(file, text)
    const { code, stderr } = await runCli(['run', '--scenarios', file])
    expect(code).toBe(2)
    expect(stderr).toMatch(/clash.mjs: scenario "append-only": name: a built-in scenario has this name/)
  })
})

describe('cachelab list --scenarios', () => {
  it("shows the user's scenarios with their files, then the built-ins", async () => {
    const { code, stdout } = await runCli(['list', '--scenarios', `${SUPPORT_BOT},${CLOCK}`])
    expect(code).toBe(0)
    expect(stdout).toMatch(
      /^Your scenarios \(--scenarios\):\n {2}support-bot {2}\[status-in-system, status-in-message\] {2}\(scenarios\/examples\/support-bot.ts\)\n {6}Refreshing the account status/,
    )
    expect(stdout).toContain(
      '  clock-in-prompt  [time-per-turn, date-per-session]  (scenarios/examples/clock-in-prompt.mjs)',
    )
    expect(stdout).toMatch(/\nBuilt-in scenarios:\n {2}append-only/)
  })
})

describe('the cachelab executable', () => {
  it('loads a TypeScript scenario file that imports types from cachelab', () => {
    const result = spawnSync(process.execPath, ['bin/cachelab.js', 'list', '--scenarios', SUPPORT_BOT], {
      encoding: 'utf8',
    })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    expect(result.stdout).toContain('support-bot  [status-in-system, status-in-message]')
  })
})

describe('cachelab check on a run of user scenarios', () => {
  it('evaluates their claims with the same --scenarios, and refuses to leave them unchecked without it', async () => {
    const out = outDir()
    expect(
      (await runCli(['run', '--scenarios', CLOCK, '--provider', 'openai-chat', '--out', out])).code,
    ).toBe(0)
    const without = await runCli(['check', '--baseline', out, '--out', out])
    expect(without.code).toBe(2)
    expect(without.stderr).toMatch(
      /has claims of scenarios check does not know \(clock-in-prompt\): pass the same --scenarios PATH as the run\n$/,
    )
    const withFiles = await runCli(['check', '--baseline', out, '--out', out, '--scenarios', CLOCK])
    expect(withFiles.code).toBe(0)
    expect(withFiles.stdout).toContain('no claim fails')
  })

  it("fails when a user scenario's claim fails", async () => {
    const directory = outDir()
    const file = join(directory, 'clock.mjs')
    // The same scenario, with the time kept out of the prompt in both variants: its claim no longer holds.
    writeFileSync(
      file,
      readFileSync(CLOCK, 'utf8').replace(
        "{ name: 'time-per-turn', policies: { route: 'unsupported' } }",
        "{ name: 'time-per-turn', skip: ['set-system'] }",
      ),
    )
    const out = join(directory, 'out')
    const run = await runCli(['run', '--scenarios', file, '--provider', 'openai-chat', '--out', out])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('FAILS clock-in-prompt on openai-chat')
    const check = await runCli(['check', '--baseline', out, '--out', out, '--scenarios', file])
    expect(check.code).toBe(1)
    expect(check.stdout).toContain('claim failed: clock-in-prompt on openai-chat')
  })
})
