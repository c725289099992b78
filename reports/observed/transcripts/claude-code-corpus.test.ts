import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readClaudeCode } from './claude-code.ts'
import { claudeCodeCorpus } from './claude-code-corpus.ts'
import { detectFormat } from './detect.ts'
import { readAll } from './read-all.ts'

describe('the synthetic Claude Code corpus', () => {
  it('is the same bytes every time', () => {
    const first = [...claudeCodeCorpus(2, 2)]
    expect([...claudeCodeCorpus(2, 2)]).toEqual(first)
    expect(first.map((file) => file.path)).toHaveLength(6)
  })

  it('reads as Claude Code, without a problem, each copy its own sessions and requests', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-corpus-'))
    const files = [...claudeCodeCorpus(3, 2)]
    const sessions = new Set<string>()
    const requests = new Set<string>()
    for (const [index, file] of files.entries()) {
      const path = join(dir, file.path)
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, file.text)
      expect(await detectFormat(path)).toBe('claude-code')
      const read = await readAll(readClaudeCode, path)
      expect(read.problems).toEqual([])
      expect(read.requests.length).toBeGreaterThan(5)
      for (const request of read.requests) {
        sessions.add(request.session)
        requests.add(request.requestId ?? '')
      }
      // The copy's number is in the file's path, so the second copy of a file is not the first.
      if (index >= files.length / 2) expect(file.path).not.toBe(files[index - files.length / 2]?.path)
    }
    // Three sessions, the first with a subagent, twice over.
    expect(sessions.size).toBe(8)
    const total = files.length
    expect(total).toBe(8)
    expect(requests.size).toBeGreaterThan(100)
  })

  it('holds the line types and the shapes the readers meet in real files', () => {
    const text = [...claudeCodeCorpus(6)].map((file) => file.text).join('')
    const lines = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    const types = new Set(lines.map((line) => line.type))
    expect(types).toEqual(
      new Set(['summary', 'user', 'assistant', 'system', 'attachment', 'file-history-snapshot']),
    )
    // Tool results are most of the bytes, as in the samples; some run to tens of kilobytes.
    const results = text.split('\n').filter((line) => line.includes('"type":"tool_result"'))
    const resultBytes = results.reduce((sum, line) => sum + line.length, 0)
    expect(resultBytes / text.length).toBeGreaterThan(0.4)
    expect(Math.max(...results.map((line) => line.length))).toBeGreaterThan(20_000)
    expect(text).toMatch(/[é→✓]/)
    expect(text).toContain('\\n')
    expect(text).toContain('\\"')
  })
})
