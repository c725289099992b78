// One step of an agent: its command run in the workspace with a clean environment (the scratch home, the
// driver's variables, PATH), stdin closed, bounded by a timeout; what it printed is kept for the report.

import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import type { AgentCommand, AgentFile, AgentPlace } from './types.ts'

/** How a step ended. */
export interface StepOutcome {
  /** The exit code; undefined when the timeout killed it. */
  code: number | undefined
  stdout: string
  stderr: string
  /** Wall-clock milliseconds. */
  ms: number
}

/** Write the driver's files (settings, providers) into the scratch home and workspace. */
export function writeAgentFiles(place: AgentPlace, files: readonly AgentFile[]): void {
  mkdirSync(place.home, { recursive: true })
  mkdirSync(place.workspace, { recursive: true })
  for (const file of files) {
    mkdirSync(dirname(file.path), { recursive: true })
    writeFileSync(file.path, file.text)
  }
}

/** Run one step of an agent; never rejects for a failing agent (the outcome says how it ended). */
export function runAgentStep(
  bin: string,
  place: AgentPlace,
  command: AgentCommand,
  timeoutMs: number,
): Promise<StepOutcome> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const child = spawn(bin, command.args, {
      cwd: place.workspace,
      // Nothing of the caller's environment leaks in but PATH: no keys, no proxies, no real home.
      env: { PATH: process.env.PATH ?? '', HOME: place.home, TERM: 'dumb', ...command.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A group of its own: an agent whose command is a wrapper (Codex's node script starts its native
      // binary) is killed whole on its timeout, not left running with the pipes open.
      detached: true,
    })
    const stdout: Buffer[] = []
    const stderr: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child.pid)
    }, timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({
        code: timedOut ? undefined : (code ?? undefined),
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        ms: Math.round(performance.now() - started),
      })
    })
  })
}

/** Kill a process and every process of its group (started `detached`, so the group is its own). */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // Gone already.
  }
}
