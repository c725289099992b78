import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { serveCommand } from './serve-command.ts'
import { runCli } from './testing.ts'

const directory = () => mkdtempSync(join(tmpdir(), 'cachelab-serve-'))

/** A port nothing listens on (free a moment ago). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

afterEach(() => vi.restoreAllMocks())

describe('cachelab serve --log', () => {
  it.each([
    [
      'in a missing directory',
      (root: string): [string, string] => [
        join(root, 'no', 'x.jsonl'),
        `no such directory ${join(root, 'no')}`,
      ],
    ],
    ['a directory', (root: string): [string, string] => [root, 'it is a directory']],
  ])('exits 2 before listening when the log is %s, with a one-line reason', async (_, given) => {
    const [path, reason] = given(directory())
    const port = await freePort()
    const { code, stdout, stderr } = await runCli(['serve', '--port', String(port), '--log', path])
    expect(code).toBe(2)
    expect(stderr).toBe(`cachelab: cannot write --log ${path}: ${reason}\n`)
    expect(stdout).toBe('')
    expect(await listening(port)).toBe(false)
  })

  it('reports a write that fails mid-run once on stderr and keeps serving', async () => {
    const path = join(directory(), 'serve.jsonl')
    let stdout = ''
    let stderr = ''
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      stdout += String(chunk)
      return true
    })
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk)
      return true
    })
    const stop = new AbortController()
    const exit = serveCommand(['--port', '0', '--log', path], stop.signal)
    await vi.waitFor(() => expect(stdout).toContain('listening on'))
    const url = /listening on (\S+)/.exec(stdout)?.[1]
    const ask = () =>
      fetch(`${url}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hello' }] }),
      })

    expect((await ask()).status).toBe(200)
    await vi.waitFor(() => expect(readFileSync(path, 'utf8')).toContain('"status":200'))
    rmSync(path)
    mkdirSync(path)
    expect((await ask()).status).toBe(200)
    expect((await ask()).status).toBe(200)
    await vi.waitFor(() => expect(stderr).toContain('it is a directory'))

    stop.abort()
    expect(await exit).toBe(0)
    expect(stderr.trimEnd().split('\n')).toEqual([
      `cachelab serve: cannot write --log ${path}: it is a directory (records are being lost; this error is reported once)`,
      `cachelab serve: 2 log records could not be written to ${path}`,
    ])
  })
})

describe('cachelab serve --lenient', () => {
  const developerMessage = (url: string) =>
    fetch(`${url}/deepseek/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'deepseek-flash',
        messages: [
          { role: 'developer', content: 'Be brief.' },
          { role: 'user', content: 'hello' },
        ],
      }),
    })

  async function serve(argv: string[]): Promise<{ url: string; stop: () => Promise<number> }> {
    let stdout = ''
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      stdout += String(chunk)
      return true
    })
    const abort = new AbortController()
    const exit = serveCommand(['--port', '0', ...argv], abort.signal)
    await vi.waitFor(() => expect(stdout).toContain('listening on'))
    const url = /listening on (\S+)/.exec(stdout)?.[1] ?? ''
    vi.restoreAllMocks()
    expect(stdout).toContain(argv.includes('--lenient') ? '(sim, lenient)' : '(sim)')
    const stop = () => {
      abort.abort()
      return exit
    }
    return { url, stop }
  }

  it('answers what the real API refuses with its error by default, and with a reply when lenient', async () => {
    const strict = await serve([])
    const refused = await developerMessage(strict.url)
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      'unknown variant `developer`',
    )
    expect(await strict.stop()).toBe(0)

    const lenient = await serve(['--lenient'])
    expect((await developerMessage(lenient.url)).status).toBe(200)
    expect(await lenient.stop()).toBe(0)
  })

  it('is a usage error with the live upstream, which validates for itself', async () => {
    const { code, stderr } = await runCli(['serve', '--port', '0', '--upstream', 'live', '--lenient'])
    expect(code).toBe(2)
    expect(stderr).toBe('cachelab: --lenient applies to the simulated upstream (--upstream sim)\n')
  })
})

describe('cachelab serve --replies', () => {
  it('exits 2 before listening on a bad rule, naming its file, line and field', async () => {
    const path = join(directory(), 'replies.jsonl')
    writeFileSync(path, '{"turn": 1, "text": "hi"}\n{"turn": 2, "stop": "length"}\n')
    const port = await freePort()
    const { code, stdout, stderr } = await runCli(['serve', '--port', String(port), '--replies', path])
    expect(code).toBe(2)
    expect(stderr).toBe(
      `cachelab: ${path}:2: stop: must be one of end, tool-use, max-tokens, content-filter, refusal, pause-turn ("length" is "max-tokens" here)\n`,
    )
    expect(stdout).toBe('')
    expect(await listening(port)).toBe(false)
  })

  it('answers from the file: a scripted text on turn 1, with no header', async () => {
    const path = join(directory(), 'replies.json')
    writeFileSync(path, '[{"session": "*", "turn": 1, "text": "Scripted hello."}]')
    let stdout = ''
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      stdout += String(chunk)
      return true
    })
    const stop = new AbortController()
    const exit = serveCommand(['--port', '0', '--replies', path], stop.signal)
    await vi.waitFor(() => expect(stdout).toContain('listening on'))
    expect(stdout).toContain(`answering from ${path} (1 rule)`)
    const url = /listening on (\S+)/.exec(stdout)?.[1]
    const response = await fetch(`${url}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hello' }] }),
    })
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> }
    expect(body.choices[0]?.message.content).toBe('Scripted hello.')
    stop.abort()
    expect(await exit).toBe(0)
  })
})

describe('cachelab serve --record DIR', () => {
  /** Serve recording into a new folder with `flags`, send a system prompt rewritten on the third request. */
  async function recorded(flags: string[]): Promise<string> {
    const dir = join(directory(), 'capture')
    let stdout = ''
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      stdout += String(chunk)
      return true
    })
    const stop = new AbortController()
    const exit = serveCommand(['--port', '0', '--record', dir, ...flags], stop.signal)
    await vi.waitFor(() => expect(stdout).toContain('listening on'))
    const url = /listening on (\S+)/.exec(stdout)?.[1]
    const messages: unknown[] = []
    for (const system of ['Mode: terse.', 'Mode: terse.', 'Mode: careful.']) {
      messages.push({ role: 'user', content: `question ${messages.length}` })
      const response = await fetch(`${url}/anthropic/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-cachelab-session': 'one' },
        body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 64, system, messages }),
      })
      messages.push({ role: 'assistant', content: ((await response.json()) as { content: unknown }).content })
    }
    stop.abort()
    expect(await exit).toBe(0)
    vi.restoreAllMocks()
    return readFileSync(join(dir, 'sessions', 'one.jsonl'), 'utf8')
  }

  it('keeps the words that changed at a break, and with --record-no-text none', async () => {
    const kept = await recorded([])
    expect(kept).toContain(
      '"change":{"node":"system[0]","kind":"replaced","context":"Mode: ","before":"terse","after":"careful"}',
    )
    expect(kept).not.toContain('question')
    const none = await recorded(['--record-no-text'])
    expect(none).not.toMatch(/"change"|terse|careful/)
  })
})
