import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startLoopback } from '../providers/mock/loopback.ts'
import { stepsCsv } from '../reports/csv.ts'
import { renderReport } from '../reports/html.ts'
import { RunRows } from '../reports/session-rows.ts'
import { summarize } from '../reports/summary.ts'
import { appendOnly } from './append-only.ts'
import { runSession } from './run.ts'

// Not shaped like any provider's key, so the repository's secret scan never mistakes this file for one.
const KEY = 'cachelab-test-secret-9f8e7d6c5b4a39281706'

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
}

describe('no key reaches anything cachelab writes', () => {
  it('a live run through the loopback server writes logs, CSV and HTML without the key', async () => {
    const server = await startLoopback({ upstream: 'sim', port: 0 })
    const serveLog: string[] = []
    const proxy = await startLoopback({
      upstream: 'live',
      port: 0,
      liveBaseURLs: server.baseURLs,
      log: (record) => serveLog.push(JSON.stringify(record)),
    })
    const dir = mkdtempSync(join(tmpdir(), 'secrets-'))
    try {
      for (const provider of ['openai-chat', 'anthropic', 'deepseek'] as const) {
        const env = {
          OPENAI_API_KEY: KEY,
          ANTHROPIC_API_KEY: KEY,
          DEEPSEEK_API_KEY: KEY,
          OPENAI_BASE_URL: proxy.baseURLs.openai,
          ANTHROPIC_BASE_URL: proxy.baseURLs.anthropic,
          DEEPSEEK_BASE_URL: proxy.baseURLs.deepseek,
        }
        const { rows } = await runSession(
          { scenario: appendOnly, variant: { name: 'default' }, provider },
          { runId: 'live-test', stream: false, env, sessionsDir: dir },
        )
        writeFileSync(join(dir, `${provider}.csv`), stepsCsv(rows))
        writeFileSync(
          join(dir, `${provider}.html`),
          renderReport({ rows: RunRows.of(rows), summaries: summarize(rows), runId: 'live-test' }),
        )
      }
    } finally {
      await proxy.close()
      await server.close()
    }
    writeFileSync(join(dir, 'serve.jsonl'), serveLog.join('\n'))
    const files = filesUnder(dir)
    expect(files.length).toBeGreaterThanOrEqual(10)
    for (const file of files) expect(readFileSync(file, 'utf8').includes(KEY), file).toBe(false)
  })

  it('a provider error that echoes the key is logged redacted', async () => {
    const echo = createServer((request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${request.headers.authorization?.slice(7)}`,
            type: 'invalid_request_error',
          },
        }),
      )
    })
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve))
    const dir = mkdtempSync(join(tmpdir(), 'secrets-'))
    try {
      const env = {
        OPENAI_API_KEY: KEY,
        OPENAI_BASE_URL: `http://127.0.0.1:${(echo.address() as AddressInfo).port}/v1`,
      }
      const { rows, events } = await runSession(
        { scenario: appendOnly, variant: { name: 'default' }, provider: 'openai-chat' },
        { runId: 'live-test', stream: false, env, sessionsDir: dir },
      )
      expect(rows[0]?.ok).toBe(false)
      const attempt = events.find((event) => event.type === 'assistant/attempt')
      expect(attempt?.type === 'assistant/attempt' && attempt.data.error.message).toContain('[redacted]')
    } finally {
      await new Promise<void>((resolve) => echo.close(() => resolve()))
    }
    for (const file of filesUnder(dir)) expect(readFileSync(file, 'utf8').includes(KEY), file).toBe(false)
  })
})
