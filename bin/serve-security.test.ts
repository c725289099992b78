import { mkdtempSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { reportCommand } from './report-command.ts'
import { findSentinels, keyInQueryRequests } from './sentinel-scan.ts'
import { serveCommand } from './serve-command.ts'
import { runCli, withEnv } from './testing.ts'

afterEach(() => vi.restoreAllMocks())

/** Start `serve` in process with its output captured; resolves once it listens. */
async function startServe(argv: string[]) {
  const output = { stdout: '', stderr: '' }
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    output.stdout += String(chunk)
    return true
  })
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    output.stderr += String(chunk)
    return true
  })
  const stop = new AbortController()
  const exit = serveCommand(argv, stop.signal)
  await vi.waitFor(() => expect(output.stdout).toContain('listening on'), { timeout: 10_000 })
  const url = /listening on (\S+)/.exec(output.stdout)?.[1] ?? ''
  return {
    url,
    output,
    stop: async () => {
      stop.abort()
      return await exit
    },
  }
}

/** A raw HTTP request: the path is sent as given (fetch would resolve `..` before sending). */
function rawRequest(url: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: hostname, port, path, method: 'POST', headers: { 'content-type': 'application/json' } },
      (response) => {
        let body = ''
        response.on('data', (chunk: Buffer) => {
          body += chunk.toString('utf8')
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
      },
    )
    request.on('error', reject)
    request.end('{}')
  })
}

/** A fake provider API: answers every request with a chat completion and keeps what it received. */
async function fakeProvider() {
  const received: Array<{ path: string; headers: IncomingHttpHeaders }> = []
  const server = createServer((incoming, outgoing) => {
    received.push({ path: incoming.url ?? '', headers: incoming.headers })
    incoming.resume()
    outgoing.writeHead(200, { 'content-type': 'application/json' })
    outgoing.end(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 0,
        model: 'gpt-5.4',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      }),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

describe('cachelab serve beyond this machine', () => {
  it('exits 2 on a non-loopback --host without --expose, before listening', async () => {
    const result = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'])
    expect(result).toMatchObject({ code: 2, stdout: '' })
    expect(result.stderr).toBe(
      'cachelab: --host 0.0.0.0 listens beyond this machine (no authentication): add --expose to mean it, or use 127.0.0.1\n',
    )
  })

  it('exits 2 on --upstream live with a non-loopback host, naming the open relay', async () => {
    const result = await runCli(['serve', '--host', '::', '--upstream', 'live', '--port', '0'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(
      '--host :: with --upstream live would relay anyone who reaches it to the provider APIs',
    )
  })

  it('listens with --expose, and warns', async () => {
    const serve = await startServe(['--host', '0.0.0.0', '--expose', '--port', '0'])
    expect(await serve.stop()).toBe(0)
    expect(serve.output.stderr).toContain(
      'warning: listening on 0.0.0.0 (--expose): reachable from other machines',
    )
  })
})

describe('cachelab serve --upstream live', () => {
  it('sends to the *_BASE_URL upstream an allow-list of headers and the path as given', async () => {
    const provider = await fakeProvider()
    await withEnv({ OPENAI_BASE_URL: `${provider.url}/v1` }, async () => {
      const serve = await startServe(['--upstream', 'live', '--port', '0'])
      try {
        expect(serve.output.stdout).toContain(`upstream: openai ${provider.url}/v1,`)
        const response = await fetch(`${serve.url}/openai/v1/chat/completions?api-version=1`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: 'Bearer caller-key',
            cookie: 'session=abc',
            'x-forwarded-host': 'evil.example',
            'x-forwarded-for': '10.0.0.1',
            'x-cachelab-session': 'mine',
            'openai-organization': 'org-1',
          },
          body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] }),
        })
        expect(response.status).toBe(200)
        const [seen] = provider.received
        expect(seen?.path).toBe('/v1/chat/completions?api-version=1')
        expect(seen?.headers).toMatchObject({
          authorization: 'Bearer caller-key',
          'openai-organization': 'org-1',
          'x-cachelab-session': 'mine',
        })
        for (const name of ['cookie', 'x-forwarded-host', 'x-forwarded-for'])
          expect(seen?.headers[name], name).toBeUndefined()
      } finally {
        await serve.stop()
        await provider.close()
      }
    })
  })

  it("passes Gemini's key header, prints no credential of an upstream URL, and carries no key to another origin", async () => {
    const provider = await fakeProvider()
    const elsewhere = await fakeProvider()
    const redirecting = createServer((incoming, outgoing) => {
      incoming.resume()
      outgoing.writeHead(307, { location: `${elsewhere.url}${incoming.url ?? ''}` })
      outgoing.end()
    })
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve))
    const redirectURL = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`
    const { hostname, port } = new URL(provider.url)
    await withEnv(
      {
        GEMINI_BASE_URL: provider.url,
        DEEPSEEK_BASE_URL: `http://user:hunter2-secret@${hostname}:${port}/v1?key=AIzaSecretKeyValue123`,
        OPENAI_BASE_URL: `${redirectURL}/v1`,
      },
      async () => {
        const serve = await startServe(['--upstream', 'live', '--port', '0'])
        try {
          expect(serve.output.stdout).not.toContain('hunter2-secret')
          expect(serve.output.stdout).not.toContain('AIzaSecretKeyValue123')
          expect(serve.output.stdout).toContain('[redacted]')
          await fetch(`${serve.url}/gemini/v1beta/models/gemini-3.8-flash:generateContent`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-goog-api-key': 'gemini-caller-key' },
            body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
          })
          expect(provider.received[0]?.headers['x-goog-api-key']).toBe('gemini-caller-key')
          const response = await fetch(`${serve.url}/openai/v1/chat/completions`, {
            method: 'POST',
            redirect: 'manual',
            headers: { 'content-type': 'application/json', authorization: 'Bearer caller-key' },
            body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] }),
          })
          // Another origin's redirect never reaches the client (it would follow it with its key), nor the proxy.
          expect(response.status).toBe(502)
          expect(response.headers.get('location')).toBeNull()
          expect(await response.text()).toContain('a redirect is never passed on')
          expect(elsewhere.received).toEqual([])
        } finally {
          await serve.stop()
          await provider.close()
          await elsewhere.close()
          await new Promise<void>((resolve) => redirecting.close(() => resolve()))
        }
      },
    )
  })

  it('refuses a path with .. (raw or encoded) with a 400, reaching nobody', async () => {
    const provider = await fakeProvider()
    await withEnv({ OPENAI_BASE_URL: `${provider.url}/v1` }, async () => {
      const serve = await startServe(['--upstream', 'live', '--port', '0'])
      try {
        for (const path of [
          '/openai/v1/../../admin',
          '/openai/v1/%2e%2e/%2e%2e/admin',
          '/openai/v1/..%2f..%2fadmin',
        ]) {
          const answer = await rawRequest(serve.url, path)
          expect(answer.status, path).toBe(400)
          expect(JSON.parse(answer.body).error.message).toContain('. or .. segment')
        }
        expect(provider.received).toEqual([])
      } finally {
        await serve.stop()
        await provider.close()
      }
    })
  })

  it('exits 2 when a *_BASE_URL is not a URL, or points at the server itself', async () => {
    await withEnv({ DEEPSEEK_BASE_URL: 'api.deepseek.com' }, async () => {
      const result = await runCli(['serve', '--upstream', 'live', '--port', '0'])
      expect(result).toMatchObject({
        code: 2,
        stderr: 'cachelab: DEEPSEEK_BASE_URL must be an http(s) URL, not "api.deepseek.com"\n',
      })
    })
    const probe = await fakeProvider()
    const port = new URL(probe.url).port
    await probe.close()
    await withEnv({ OPENAI_BASE_URL: `http://localhost:${port}/openai/v1` }, async () => {
      const result = await runCli(['serve', '--upstream', 'live', '--port', port])
      expect(result.code).toBe(2)
      expect(result.stderr).toContain(
        `OPENAI_BASE_URL=http://localhost:${port}/openai/v1 points at this server`,
      )
    })
  })
})

describe('keys in every output of serve', () => {
  it('never reach the log, the capture, its report or an answer, wherever the client puts them', async () => {
    const key = 'cachelab-sentinel-test-0123456789abcdef'
    const work = mkdtempSync(join(tmpdir(), 'cachelab-sentinel-'))
    const serve = await startServe([
      '--port',
      '0',
      '--log',
      join(work, 'serve.jsonl'),
      '--record',
      join(work, 'capture'),
      '--record-bodies',
    ])
    const answers: Record<string, string> = {}
    try {
      const base = { openai: `${serve.url}/openai/v1`, anthropic: `${serve.url}/anthropic` }
      for (const [index, request] of keyInQueryRequests(base, key).entries()) {
        const response = await fetch(request)
        answers[`answer ${index + 1} (${response.status})`] = await response.text()
      }
      const climbing = await rawRequest(serve.url, `/openai/v1/../chat/completions?api_key=${key}`)
      answers.climbing = climbing.body
      expect(climbing.status).toBe(400)
    } finally {
      await serve.stop()
    }
    expect(Object.keys(answers).map((name) => /\((\d+)\)/.exec(name)?.[1])).toContain('200')
    expect(await reportCommand([join(work, 'capture'), '--out', join(work, 'report')])).toBe(0)
    expect(findSentinels([work], { ...answers, ...serve.output }, [key])).toEqual([])
    // The scan can fail: the sentinel is there to find when something does keep it.
    expect(findSentinels([], { probe: `?key=${key}` }, [key])).toEqual([`probe: ${key}`])
  })
})
