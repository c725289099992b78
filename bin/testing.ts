// Test helpers for the command line: run `main` in process with its output captured, and set
// environment variables for the length of a call.

import { mkdtempSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { vi } from 'vitest'
import { RunFolder } from '../reports/run-folder.ts'
import { main } from './cli.ts'

/** What one CLI invocation returned and printed. */
export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

/** Run the CLI in process on `argv`, capturing what it writes to stdout and stderr. */
export async function runCli(argv: readonly string[]): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk)
    return true
  })
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk)
    return true
  })
  try {
    const code = await main([...argv])
    return { code, stdout, stderr }
  } finally {
    out.mockRestore()
    err.mockRestore()
  }
}

/** Run `body` with the environment variables set (a variable given undefined is unset), then restore them. */
export async function withEnv<T>(
  vars: Record<string, string | undefined>,
  body: () => Promise<T>,
): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]))
  const assign = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
  assign(vars)
  try {
    return await body()
  } finally {
    assign(saved)
  }
}

/** A finished run folder holding exactly `files` (name → content), marked complete as cachelab marks its own. */
export function finishedRunDir(files: Readonly<Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'cachelab-run-'))
  const folder = RunFolder.replace(dir, { writer: 'test', files: Object.keys(files) })
  for (const [name, content] of Object.entries(files)) folder.write(name, content)
  folder.complete()
  return dir
}

/** Whether something accepts connections on the port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** Whether a process of this id is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Wait (generously: a loaded machine) until `condition` holds; false if it never did. */
export async function eventually(condition: () => boolean | Promise<boolean>, ms = 60_000): Promise<boolean> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await condition()) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}
