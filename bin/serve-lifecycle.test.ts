// serve's start and stop as a user's script sees them: the npm bin stops at SIGTERM however it was
// launched, and a start that fails leaves nothing that would refuse the next one.

import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { serveCommand } from './serve-command.ts'
import { alive, eventually, listening, runCli } from './testing.ts'

const BIN = fileURLToPath(new URL('./cachelab.js', import.meta.url))
const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** What a child printed so far, and its exit once it has exited. */
function watch(child: ChildProcess) {
  const seen = {
    stdout: '',
    stderr: '',
    exit: undefined as { code: number | null; signal: string | null } | undefined,
  }
  child.stdout?.on('data', (chunk: Buffer) => {
    seen.stdout += chunk.toString('utf8')
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    seen.stderr += chunk.toString('utf8')
  })
  child.once('exit', (code, signal) => {
    seen.exit = { code, signal }
  })
  return seen
}

const started: ChildProcess[] = []
const orphans: number[] = []
afterEach(() => {
  vi.restoreAllMocks()
  // Only what these tests started, by id, if a test failed before stopping it.
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const pid of orphans.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL')
})

describe('the npm bin running serve', () => {
  it('exits at SIGTERM and closes its port', { timeout: 180_000 }, async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    started.push(child)
    const seen = watch(child)
    expect(await eventually(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(seen.stdout))).toBe(true)
    const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(seen.stdout)?.[1])
    expect(await listening(port)).toBe(true)
    child.kill('SIGTERM')
    expect(await eventually(() => seen.exit !== undefined)).toBe(true)
    // With what it printed beside: a run that dies of the signal instead says what it was doing.
    expect({ exit: seen.exit, stderr: seen.stderr }).toEqual({
      exit: { code: 0, signal: null },
      stderr: seen.exit?.code === 0 ? seen.stderr : '',
    })
    expect(await listening(port)).toBe(false)
  })

  it('started by npm under a shell that SIGTERM kills, stops once the shell is gone', {
    timeout: 180_000,
  }, async () => {
    // What `npx cachelab serve &` then `kill %1` does: npm passes the signal to `sh -c`, which dies of it.
    const shell = spawn('sh', ['-c', `"${process.execPath}" "${BIN}" serve --port 0 & echo "pid $!"; wait`], {
      cwd: ROOT,
      env: { ...process.env, npm_command: 'exec' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    started.push(shell)
    const seen = watch(shell)
    expect(await eventually(() => /listening on http:\/\/127\.0\.0\.1:\d+/.test(seen.stdout))).toBe(true)
    const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(seen.stdout)?.[1])
    const pid = Number(/pid (\d+)/.exec(seen.stdout)?.[1])
    orphans.push(pid)
    expect(alive(pid)).toBe(true)
    shell.kill('SIGTERM')
    expect(await eventually(() => !alive(pid))).toBe(true)
    expect(await listening(port)).toBe(false)
  })
})

describe('serve --record when the start fails', () => {
  it('leaves no capture.json on a busy port, and the next try records', async () => {
    const busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    const { port } = busy.address() as { port: number }
    const dir = join(mkdtempSync(join(tmpdir(), 'cachelab-serve-start-')), 'capture')
    try {
      const failed = await runCli(['serve', '--port', String(port), '--record', dir])
      expect(failed.code).toBe(2)
      expect(failed.stderr).toBe(
        `cachelab: port ${port} on 127.0.0.1 is in use: choose another --port (0: any free one)\n`,
      )
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()))
    }
    expect(existsSync(join(dir, 'capture.json'))).toBe(false)
    expect(existsSync(dir)).toBe(false)

    let banner = ''
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      banner += String(chunk)
      return true
    })
    const stop = new AbortController()
    const exit = serveCommand(['--port', '0', '--record', dir], stop.signal)
    expect(await eventually(() => banner.includes('listening on'))).toBe(true)
    expect(existsSync(join(dir, 'capture.json'))).toBe(true)
    stop.abort()
    expect(await exit).toBe(0)
  })
})
