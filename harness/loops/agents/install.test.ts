import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { claudeCode } from './claude-code.ts'
import { agentsCache, installedAgent, installFolder } from './install.ts'

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
})
