// What tells one run from another: its folder's name, its id, and what a second run into the same folder
// meets (notes/2026-12-02-run-folders.md).

import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CachelabError } from '../harness/errors.ts'
import { lockFileOf } from '../reports/folder-lock.ts'
import { buildPrefixOf, readManifest, runStamp } from '../reports/run-folder.ts'
import { SCENARIOS } from '../scenarios/index.ts'
import { run } from '../scenarios/matrix.ts'
import type { Scenario } from '../scenarios/types.ts'
import { runCli } from './testing.ts'

const temp = () => mkdtempSync(join(tmpdir(), 'cachelab-identity-'))
const appendOnly = SCENARIOS.find((scenario) => scenario.name === 'append-only') as Scenario

describe('a default run folder name', () => {
  it('differs between two runs started in the same millisecond, and sorts by time', () => {
    const now = new Date('2026-12-02T09:30:05.042Z')
    const names = new Set(Array.from({ length: 50 }, () => runStamp(now)))
    expect(names.size).toBe(50)
    for (const name of names) expect(name).toMatch(/^20261202-093005-042-[0-9a-f]{6}$/)
    const later = runStamp(new Date('2026-12-02T09:30:05.043Z'), '000000')
    expect([...names].every((name) => name < later)).toBe(true)
    expect(runStamp(new Date('2026-12-02T09:30:06.000Z'), '000000') > later).toBe(true)
  })
})

describe('a simulated run id', () => {
  const idOf = async (scenario: Scenario, more: { stream?: boolean } = {}) =>
    (await run({ scenarios: [scenario], providers: ['deepseek'], jobs: 1, ...more })).runId

  it('is the same for the same run and another when the scenario script or an option that changes results differs', async () => {
    const baseline = await idOf(appendOnly)
    expect(await idOf(appendOnly)).toBe(baseline)
    // The same session names, a script that differs (one more turn; a rewritten system prompt): another id.
    expect(
      await idOf({ ...appendOnly, script: [...appendOnly.script, ...appendOnly.script.slice(-1)] }),
    ).not.toBe(baseline)
    expect(await idOf({ ...appendOnly, system: { tokens: 6000, seed: 'rewritten' } })).not.toBe(baseline)
    expect(await idOf(appendOnly, { stream: true })).not.toBe(baseline)
  })
})

describe('two runs into one --out', () => {
  it('let one in and refuse the other with a usage error: never a mix of the two', async () => {
    const out = join(temp(), 'run')
    const options = { providers: ['deepseek' as const], jobs: 1, out }
    const results = await Promise.allSettled([
      run({ ...options, scenarios: ['append-only'] }),
      run({ ...options, scenarios: ['prompt-change'] }),
    ])
    const refused = results.filter((result) => result.status === 'rejected')
    expect(refused).toHaveLength(1)
    const reason = (refused[0] as PromiseRejectedResult).reason as CachelabError
    expect(reason).toBeInstanceOf(CachelabError)
    expect(reason.kind).toBe('usage')
    expect(reason.message).toContain(`${out} is being written by another cachelab run (pid ${process.pid}`)
    const kept = results.find((result) => result.status === 'fulfilled')
    const { runId, rows } = kept?.status === 'fulfilled' ? kept.value : { runId: '', rows: [] }
    const scenario = rows[0]?.scenario ?? ''
    // Every row of steps.csv and every session log is the one run's.
    const steps = readFileSync(join(out, 'steps.csv'), 'utf8').trim().split('\n').slice(1)
    expect(steps).toHaveLength(rows.length)
    expect(steps.every((line) => line.startsWith(`${runId},${scenario},`))).toBe(true)
    expect(readdirSync(join(out, 'sessions')).every((name) => name.startsWith(`${scenario}.`))).toBe(true)
    expect((await runCli(['check', '--baseline', out, '--out', out])).code).toBe(0)
  })

  it('is exit 2 in one line from the command while another process holds the folder', async () => {
    const parent = temp()
    const out = join(parent, 'run')
    // This test's own process is running: its pid holds the lock.
    writeFileSync(
      lockFileOf(out),
      `${JSON.stringify({ pid: process.pid, token: 'other', writer: 'run', started: '2026-12-02T09:00:00Z' })}\n`,
    )
    const result = await runCli(['run', '--scenario', 'append-only', '--provider', 'deepseek', '--out', out])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(
      new RegExp(
        `^cachelab: \\S+ is being written by another cachelab run \\(pid ${process.pid}, [^\\n]*\\n$`,
      ),
    )
    expect(existsSync(out)).toBe(false)
    expect(readdirSync(parent)).toEqual([`.run.cachelab-lock`])
  })
})

describe('a re-run interrupted by SIGINT', () => {
  it('leaves the previous complete run readable and passing check; the next run takes the folder over', async () => {
    const parent = temp()
    const out = join(parent, 'run')
    const small = ['run', '--scenario', 'append-only', '--provider', 'deepseek', '--out', out]
    expect((await runCli(small)).code).toBe(0)
    const before = readFileSync(join(out, 'steps.csv'), 'utf8')
    // The whole matrix on one thread: long enough to be interrupted once its build folder exists.
    const child = spawn(process.execPath, ['bin/cachelab.js', 'run', '--jobs', '1', '--out', out], {
      cwd: join(import.meta.dirname, '..'),
      stdio: 'ignore',
    })
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    await until(() => readdirSync(parent).some((name) => name.startsWith(buildPrefixOf(out))), child, 120_000)
    child.kill('SIGINT')
    await exited
    expect(readFileSync(join(out, 'steps.csv'), 'utf8')).toBe(before)
    expect(readManifest(out)?.state).toBe('complete')
    expect((await runCli(['check', '--baseline', out, '--out', out])).code).toBe(0)
    // The killed run's lock and build folder do not stand in the next run's way, and do not outlive it.
    expect((await runCli(small)).code).toBe(0)
    expect(readdirSync(parent)).toEqual(['run'])
  }, 900_000)
})

/** Resolve once `ready` holds, polling; reject if the child exits first or `limitMs` passes. */
async function until(ready: () => boolean, child: ChildProcess, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs
  while (!ready()) {
    if (child.exitCode !== null) throw new Error(`cachelab run exited (${child.exitCode}) before building`)
    if (Date.now() > deadline) throw new Error(`no build folder after ${limitMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
