import { describe, expect, it } from 'vitest'
import { timed } from './import.bench.ts'

/** A node script that spins until its own process has used `ms` of CPU. */
const spin = (ms: number) =>
  `const until = ${ms * 1000}; while (process.cpuUsage().user + process.cpuUsage().system < until) {}`

describe('the import bench’s CPU reading', () => {
  it('counts every process of the command’s tree, a grandchild’s included', () => {
    // The child starts a grandchild that spins and waits for it, as ccusage's launcher waits for its binary.
    const child = `require('node:child_process').spawnSync(process.execPath, ['-e', ${JSON.stringify(spin(300))}])`
    const run = timed([process.execPath, '-e', child])
    expect(run.status).toBe(0)
    expect(run.cpuMs).toBeGreaterThanOrEqual(300)
  })

  it('keeps the command’s output, error output and exit status', () => {
    const run = timed([process.execPath, '-e', 'console.log("out"); console.error("err"); process.exit(3)'])
    expect(run).toMatchObject({ status: 3, stdout: 'out\n', stderr: 'err\n' })
  })
})
