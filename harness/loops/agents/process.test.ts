import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runAgentStep, writeAgentFiles } from './process.ts'

const place = () => {
  const root = mkdtempSync(join(tmpdir(), 'cachelab-agent-step-'))
  return { home: join(root, 'home'), workspace: join(root, 'workspace') }
}

describe('one step of an agent', () => {
  it('runs in its workspace with the scratch home and its own variables, none of the caller’s', async () => {
    const where = place()
    writeAgentFiles(where, [{ path: join(where.home, '.agent', 'settings.json'), text: '{}\n' }])
    expect(readFileSync(join(where.home, '.agent', 'settings.json'), 'utf8')).toBe('{}\n')
    process.env.CACHELAB_TEST_SECRET = 'never-passed-on'
    const outcome = await runAgentStep(
      process.execPath,
      where,
      {
        args: [
          '-e',
          'console.log(JSON.stringify([process.cwd(), process.env.HOME, process.env.AGENT, process.env.CACHELAB_TEST_SECRET ?? null]))',
        ],
        env: { AGENT: 'yes' },
      },
      60_000,
    )
    delete process.env.CACHELAB_TEST_SECRET
    expect(outcome.code).toBe(0)
    expect(JSON.parse(outcome.stdout)).toEqual([where.workspace, where.home, 'yes', null])
  })

  it('is killed past its time and says so', async () => {
    const where = place()
    writeAgentFiles(where, [])
    const outcome = await runAgentStep(
      process.execPath,
      where,
      { args: ['-e', 'setInterval(() => {}, 1000)'], env: {} },
      200,
    )
    expect(outcome.code).toBeUndefined()
  })

  it('kills what a wrapper started too (Codex: a node script that starts its binary), so the step ends', async () => {
    const where = place()
    writeAgentFiles(where, [])
    // The wrapper starts a child that holds the same output and never ends, as a native binary would.
    const wrapper = `require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'inherit' }); setInterval(() => {}, 1000)`
    const outcome = await runAgentStep(process.execPath, where, { args: ['-e', wrapper], env: {} }, 500)
    expect(outcome.code).toBeUndefined()
  })
})
