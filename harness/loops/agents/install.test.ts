import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { claudeCode } from './claude-code.ts'
import { agentsCache, installError, installedAgent, installFolder, latestVersion } from './install.ts'

/** Run `body` with an `npm` on PATH that prints `stdout` and exits with `code`. */
async function withFakeNpm<T>(stdout: string, code: number, body: () => Promise<T>): Promise<T> {
  const folder = mkdtempSync(join(tmpdir(), 'cachelab-fake-npm-'))
  const script = join(folder, 'npm')
  writeFileSync(script, `#!/bin/sh\necho "$*" > "${folder}/args"\nprintf '%s\\n' '${stdout}'\nexit ${code}\n`)
  chmodSync(script, 0o755)
  const path = process.env.PATH
  process.env.PATH = `${folder}:${path ?? ''}`
  try {
    return await body()
  } finally {
    process.env.PATH = path
  }
}

describe('the agents cache', () => {
  it('is CACHELAB_AGENTS_DIR, else a folder under the home cache', () => {
    expect(agentsCache({ CACHELAB_AGENTS_DIR: '/tmp/agents' })).toBe('/tmp/agents')
    expect(agentsCache({})).toMatch(/\.cache\/cachelab\/agents$/)
  })

  it('keeps each pinned version in a folder of its own, found there without installing again', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'cachelab-agents-cache-'))
    const folder = installFolder(claudeCode, cache)
    expect(folder).toBe(join(cache, '@anthropic-ai+claude-code@2.1.328'))
    mkdirSync(join(folder, 'node_modules', '.bin'), { recursive: true })
    writeFileSync(join(folder, 'node_modules', '.bin', 'claude'), '')
    expect(await installedAgent(claudeCode, cache)).toBe(join(folder, 'node_modules', '.bin', 'claude'))
  })

  it("asks the registry for an agent's latest version, and says which package it could not find", async () => {
    expect(await withFakeNpm('2.1.999', 0, () => latestVersion(claudeCode))).toBe('2.1.999')
    await expect(withFakeNpm('npm error 404 Not Found', 1, () => latestVersion(claudeCode))).rejects.toThrow(
      /cannot find the latest version of @anthropic-ai\/claude-code/,
    )
    await expect(withFakeNpm('<html>', 0, () => latestVersion(claudeCode))).rejects.toThrow(
      /answered "<html>"/,
    )
  })

  it("says why an install failed by its last error, not by the pointer to npm's log", () => {
    const stderr = [
      'npm error notarget No matching version found for @kilocode/cli-linux-x64-baseline-musl@7.8.1.',
      'npm error Failed to setup kilo binary: It seems your package manager failed to install the right Kilo CLI package.',
      'npm error A complete log of this run can be found in: /root/.npm/_logs/debug-0.log',
      '',
    ].join('\n')
    expect(installError(stderr)).toBe(
      'Failed to setup kilo binary: It seems your package manager failed to install the right Kilo CLI package.',
    )
    expect(installError(undefined)).toBeUndefined()
  })
})
