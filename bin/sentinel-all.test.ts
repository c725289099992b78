// Issue 26's proof that no key reaches anything cachelab writes: every command of the CLI runs as a
// child process with a sentinel in every key variable of .env.example, another in a `.env` file in its
// folder, and more in its inputs (key headers, `?key=` query strings, base URLs with user-info, key-named
// body fields, an upstream error echoing the key, a transcript whose lines hold one). Each command's
// stdout, stderr and every file it wrote are then searched for every sentinel.

import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compatibleProviders } from '../providers/compatible.ts'
import { findSentinels, keyInQueryRequests } from './sentinel-scan.ts'

const BIN = fileURLToPath(new URL('./cachelab.js', import.meta.url))
const ROOT = fileURLToPath(new URL('..', import.meta.url))

const hex = () => randomBytes(8).toString('hex')
const sentinel = (where: string) => `cachelab-sentinel-${where.toLowerCase().replace(/_/g, '-')}-${hex()}`

/** Every key variable .env.example names: `*_API_KEY`, the AWS key pair and tokens. */
const KEY_VARIABLES = readFileSync(join(ROOT, '.env.example'), 'utf8')
  .split('\n')
  .map((line) => /^#?\s*([A-Z][A-Z0-9_]*)=/.exec(line)?.[1])
  .filter((name): name is string => name !== undefined && /_KEY$|_KEY_ID$|_TOKEN(_|$)|SECRET/.test(name))

/** The sentinel of each key variable in the environment, and another of each in `.env`. */
const ENV_KEYS = Object.fromEntries(KEY_VARIABLES.map((name) => [name, sentinel(`env-${name}`)]))
const DOTENV_KEYS = Object.fromEntries(KEY_VARIABLES.map((name) => [name, sentinel(`dotenv-${name}`)]))
/** Keys that only inputs carry: in a header, a query string, a body field, a URL, a transcript, a file. */
const INPUT = {
  header: sentinel('header'),
  query: sentinel('query'),
  body: sentinel('body'),
  userInfo: sentinel('user-info'),
  echoed: sentinel('echoed'),
  transcript: sentinel('transcript'),
  otel: sentinel('otel'),
}
const SENTINELS = [...Object.values(ENV_KEYS), ...Object.values(DOTENV_KEYS), ...Object.values(INPUT)]
/** The random tail of each sentinel too: a key cut short or reshaped (`cach…1234`) still shows it. */
const NEEDLES = [...SENTINELS, ...SENTINELS.map((value) => value.slice(-16))]

const work = mkdtempSync(join(tmpdir(), 'cachelab-sentinel-all-'))
/** Each command's working folder holds a `.env` with the dotenv sentinels. */
const cwd = join(work, 'cwd')
mkdirSync(cwd)
writeFileSync(
  join(cwd, '.env'),
  `${KEY_VARIABLES.map((name) => `${name}=${DOTENV_KEYS[name]}`).join('\n')}\n`,
)

/** The environment of every command: nothing of this machine's keys, a sentinel in every key variable. */
function commandEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env))
    if (!/_KEY$|_KEY_ID$|_TOKEN|SECRET|_BASE_URL$|^OTEL_|^CACHELAB_|^npm_|^VITEST/.test(name))
      env[name] = value
  Object.assign(env, ENV_KEYS, {
    HOME: join(work, 'home'),
    NO_COLOR: '1',
    // The OTLP exporter's own header variable: the collector may see it, no file or output may.
    OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${INPUT.otel}`,
  })
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}

interface Outcome {
  code: number | null
  stdout: string
  stderr: string
}

/** What one command printed and how it exited, each output scanned together with its files. */
const outcomes: Record<string, Outcome & { files: string[] }> = {}

/** Run `cachelab ARGS` to its end in the working folder; `files` are what it writes, scanned with its output. */
async function cachelab(
  name: string,
  argv: readonly string[],
  files: readonly string[],
  env: NodeJS.ProcessEnv = commandEnv(),
  input?: string,
): Promise<Outcome> {
  const child = spawn(process.execPath, [BIN, ...argv], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
  const outcome = await finished(child, input)
  outcomes[name] = { ...outcome, files: [...files] }
  return outcome
}

function finished(child: ChildProcess, input?: string): Promise<Outcome> {
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8')
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  child.stdin?.end(input ?? '')
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

/** A long-running `cachelab serve`: its URL once it listens, and a stop that ends it with SIGTERM. */
async function serve(
  name: string,
  argv: readonly string[],
  files: readonly string[],
  env: NodeJS.ProcessEnv,
) {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...argv], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let printed = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString('utf8')
      const match = /listening on (\S+)/.exec(printed)
      if (match?.[1] !== undefined) resolve(match[1])
    })
    child.once('close', (code) => reject(new Error(`serve ${name} exited ${code} before listening`)))
  })
  const ended = finished(child)
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM')
      const outcome = await ended
      outcomes[name] = { ...outcome, stdout: printed + outcome.stdout, files: [...files] }
    },
  }
}

/** A local HTTP server that keeps every body it received and answers with `answer`. */
async function localServer(answer: (request: IncomingMessage, body: string) => [number, string]) {
  const bodies: string[] = []
  const server: Server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString('latin1')
    })
    request.on('end', () => {
      bodies.push(body)
      const [status, text] = answer(request, body)
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return { port, bodies, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

/** A tiny scenario of one turn of two steps: the run commands stay quick. */
const SCENARIO = join(work, 'tiny.mjs')
writeFileSync(
  SCENARIO,
  `export default {
  name: 'tiny',
  demonstrates: 'Two requests of one session, for the sentinel scan.',
  variants: [{ name: 'default' }],
  system: 'You are a terse assistant. ' + 'Keep answers short. '.repeat(80),
  tools: [{ name: 'look', description: 'Look something up.', parameters: { type: 'object', properties: { q: { type: 'string' } } } }],
  maxTokens: 64,
  claims: [],
  script: [{ kind: 'turn', user: 'Look it up, please.', steps: [
    { toolCalls: [{ name: 'look', arguments: { q: 'x' }, result: { tokens: 120 } }] },
    { text: { tokens: 20 } },
  ] }],
}
`,
)

/** A Claude Code transcript whose every kind of line holds the transcript sentinel. */
const TRANSCRIPT = join(work, 'claude-code.jsonl')
{
  const session = '5e55a0de-0000-4000-8000-0000000051a1'
  const base = { isSidechain: false, sessionId: session, version: '2.1.0', cwd: `/work/${INPUT.transcript}` }
  const usage = (read: number, write: number) => ({
    input_tokens: 4,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
    output_tokens: 20,
  })
  const lines = [
    {
      ...base,
      parentUuid: null,
      type: 'user',
      uuid: 'u1',
      timestamp: '2026-01-10T10:00:00.000Z',
      message: {
        role: 'user',
        content: `My key is ${INPUT.transcript}; export OPENAI_API_KEY=${INPUT.transcript}`,
      },
    },
    {
      ...base,
      parentUuid: 'u1',
      type: 'assistant',
      uuid: 'a1',
      requestId: 'req_1',
      timestamp: '2026-01-10T10:00:02.000Z',
      message: {
        model: 'claude-sonnet-4-5',
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: `echo ${INPUT.transcript}` } },
        ],
        stop_reason: 'tool_use',
        usage: usage(0, 3000),
      },
    },
    {
      ...base,
      parentUuid: 'a1',
      type: 'user',
      uuid: 'u2',
      timestamp: '2026-01-10T10:00:03.000Z',
      message: {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: `Authorization: Bearer ${INPUT.transcript}`,
          },
        ],
      },
    },
    {
      ...base,
      parentUuid: 'u2',
      type: 'assistant',
      uuid: 'a2',
      requestId: 'req_2',
      timestamp: '2026-01-10T10:00:05.000Z',
      message: {
        model: 'claude-sonnet-4-5',
        id: 'msg_2',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: `Your key ${INPUT.transcript} is set.` }],
        stop_reason: 'end_turn',
        usage: usage(3000, 40),
      },
    },
  ]
  // Its last line torn mid-write, a key in what was written.
  writeFileSync(
    TRANSCRIPT,
    `${lines.map((line) => JSON.stringify(line)).join('\n')}\n{"type":"user","message":{"content":"${INPUT.transcript}`,
  )
}

let simulated: Awaited<ReturnType<typeof serve>>
let proxy: Awaited<ReturnType<typeof serve>>
let echoing: Awaited<ReturnType<typeof localServer>>
let collector: Awaited<ReturnType<typeof localServer>>
const answers: Record<string, string> = {}

beforeAll(async () => {
  // An upstream that refuses every key, echoing it as OpenAI's 401 does.
  echoing = await localServer((request) => {
    const key = String(request.headers.authorization ?? '').replace(/^Bearer /, '')
    return [
      401,
      JSON.stringify({
        error: {
          message: `Incorrect API key provided: ${key}.`,
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      }),
    ]
  })
  collector = await localServer(() => [200, '{}'])
  simulated = await serve(
    'serve (sim)',
    ['--log', join(work, 'sim.jsonl'), '--record', join(work, 'sim-capture'), '--record-bodies'],
    [join(work, 'sim.jsonl'), join(work, 'sim-capture')],
    commandEnv(),
  )
  const sim = new URL(simulated.url)
  // The proxy's upstreams: the simulator (one URL with user-info and a key query), and the echoing API.
  proxy = await serve(
    'serve --upstream live',
    [
      '--upstream',
      'live',
      '--log',
      join(work, 'live.jsonl'),
      '--record',
      join(work, 'live-capture'),
      '--record-bodies',
    ],
    [join(work, 'live.jsonl'), join(work, 'live-capture')],
    commandEnv({
      OPENAI_BASE_URL: `${simulated.url}/openai/v1`,
      ANTHROPIC_BASE_URL: `${simulated.url}/anthropic`,
      DEEPSEEK_BASE_URL: `http://127.0.0.1:${echoing.port}`,
      GEMINI_BASE_URL: `http://user:${INPUT.userInfo}@${sim.host}/gemini?key=${INPUT.query}`,
    }),
  )
  // Keys where clients put them besides the environment, sent to both servers.
  for (const [server, url] of [
    ['sim', simulated.url],
    ['live', proxy.url],
  ] as const) {
    const requests = [
      ...keyInQueryRequests({ openai: `${url}/openai/v1`, anthropic: `${url}/anthropic` }, INPUT.header),
      new Request(`${url}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${INPUT.header}` },
        body: JSON.stringify({
          model: 'gpt-5.4',
          messages: [{ role: 'user', content: 'hello' }],
          api_key: INPUT.body,
          extra_headers: { Authorization: `Bearer ${INPUT.body}` },
          prompt_cache_key: INPUT.body,
          user: INPUT.body,
        }),
      }),
      new Request(`${url}/anthropic/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': INPUT.header },
        body: JSON.stringify({
          model: 'claude-sonnet-4-6',
          max_tokens: 16,
          // The caller's key as its user id: the session must not be named after it.
          metadata: { user_id: INPUT.header },
          messages: [{ role: 'user', content: 'hello' }],
        }),
      }),
      new Request(`${url}/deepseek/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${INPUT.header}` },
        body: JSON.stringify({ model: 'deepseek-flash', messages: [{ role: 'user', content: 'hello' }] }),
      }),
      new Request(`${url}/gemini/v1beta/models/gemini-2.5-flash:generateContent?key=${INPUT.query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': INPUT.header },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }),
      }),
      new Request(`${url}/bedrock/model/anthropic.claude-sonnet-4-6/converse`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${INPUT.header}` },
        body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hello' }] }] }),
      }),
    ]
    for (const [index, request] of requests.entries()) {
      const response = await fetch(request)
      answers[`${server} answer ${index + 1} (${response.status} ${request.url.replace(url, '')})`] =
        await response.text()
    }
  }
}, 300_000)

afterAll(async () => {
  await Promise.allSettled([simulated?.stop(), proxy?.stop()])
  await echoing?.close()
  await collector?.close()
})

/** The first session log of a run's sessions folder. */
function firstSessionLog(dir: string): string {
  const [name] = readdirSync(dir)
    .filter((file) => file.endsWith('.jsonl'))
    .sort()
  if (name === undefined) throw new Error(`no session log in ${dir}`)
  return name
}

/** What of a command's output and files holds a sentinel, as `where: sentinel`. */
function leaksOf(name: string): string[] {
  const outcome = outcomes[name]
  if (outcome === undefined) throw new Error(`${name} did not run`)
  return findSentinels(
    outcome.files.filter((path) => existsSync(path)),
    { [`${name} stdout`]: outcome.stdout, [`${name} stderr`]: outcome.stderr },
    NEEDLES,
  )
}

describe('every command of the CLI, with keys everywhere a key can be', () => {
  it('the servers answered keyed requests, and their answers hold no key', () => {
    expect(Object.keys(answers).some((name) => name.includes('(200'))).toBe(true)
    expect(findSentinels([], answers, NEEDLES)).toEqual([])
  })

  it('run --live through the live proxy writes no key, keys from the environment and .env', async () => {
    const out = join(work, 'run-live')
    const result = await cachelab(
      'run --live',
      [
        'run',
        '--live',
        '--scenarios',
        SCENARIO,
        '--provider',
        'openai-chat,openai-responses,anthropic,deepseek,gemini,bedrock,xai',
        '--jobs',
        '1',
        '--out',
        out,
        '--otlp-file',
        join(out, 'spans.json'),
      ],
      [out],
      commandEnv({
        OPENAI_BASE_URL: `${proxy.url}/openai/v1`,
        ANTHROPIC_BASE_URL: `${proxy.url}/anthropic`,
        // The proxy's upstream for DeepSeek refuses the key, echoing it.
        DEEPSEEK_BASE_URL: `${proxy.url}/deepseek`,
        GEMINI_BASE_URL: `${proxy.url}/gemini`,
        BEDROCK_BASE_URL: `${simulated.url}/bedrock`,
        XAI_BASE_URL: `${simulated.url}/xai/v1`,
        // From .env instead.
        ANTHROPIC_API_KEY: undefined,
        AWS_BEARER_TOKEN_BEDROCK: undefined,
      }),
    )
    // The requests went out: most answered, DeepSeek's refused by an upstream echoing the key, Gemini's
    // refused for its base URL's user-info; each failure is named without the key.
    expect(result.stdout).toMatch(/: 10 requests, [1-9]\d* failed attempts/)
    expect(result.stderr).toContain('Incorrect API key provided: [redacted]')
    expect(result.stderr).toContain('includes credentials')
    expect(leaksOf('run --live')).toEqual([])
  })

  it('run on the simulator, exported to a collector whose URL holds a key, writes no key', async () => {
    const out = join(work, 'run-sim')
    await cachelab(
      'run',
      [
        'run',
        '--scenarios',
        SCENARIO,
        '--provider',
        'anthropic,openai-chat',
        '--jobs',
        '1',
        '--out',
        out,
        '--otlp-endpoint',
        `http://127.0.0.1:${collector.port}/v1/traces?api_key=${INPUT.query}`,
      ],
      [out],
    )
    expect(outcomes.run?.code).toBe(0)
    expect(leaksOf('run')).toEqual([])
    expect(findSentinels([], { collector: collector.bodies.join('\n') }, NEEDLES)).toEqual([])
  })

  it('record --upstream live around a client with keys in its arguments writes no key', async () => {
    const out = join(work, 'record')
    const client = join(work, 'client.mjs')
    writeFileSync(
      client,
      `const key = process.argv[2]
for (const [url, headers, body] of [
  [process.env.OPENAI_BASE_URL + '/chat/completions?key=' + key, { authorization: 'Bearer ' + process.env.OPENAI_API_KEY },
    { model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }], api_key: key }],
  [process.env.ANTHROPIC_BASE_URL + '/v1/messages', { 'x-api-key': key },
    { model: 'claude-sonnet-4-6', max_tokens: 16, metadata: { user_id: key }, messages: [{ role: 'user', content: 'hi' }] }],
]) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  await response.text()
}
`,
    )
    await cachelab(
      'record',
      [
        'record',
        '--out',
        out,
        '--upstream',
        'live',
        '--record-bodies',
        '--log',
        join(work, 'record.jsonl'),
        '--',
        process.execPath,
        client,
        // As a shell expands `$ANTHROPIC_API_KEY` on the command line.
        ENV_KEYS.ANTHROPIC_API_KEY as string,
      ],
      [out, join(work, 'record.jsonl')],
      commandEnv({
        OPENAI_BASE_URL: `${simulated.url}/openai/v1`,
        ANTHROPIC_BASE_URL: `${simulated.url}/anthropic`,
      }),
    )
    expect(outcomes.record?.code).toBe(0)
    expect(leaksOf('record')).toEqual([])
  })

  it('simulate, with keys in the request bodies, prints no key', async () => {
    const body = {
      model: 'gpt-5.4',
      messages: [{ role: 'user', content: 'hello' }],
      api_key: INPUT.body,
      prompt_cache_key: INPUT.body,
      user: INPUT.body,
      extra_headers: { Authorization: `Bearer ${INPUT.body}` },
    }
    const file = join(work, 'bodies.jsonl')
    writeFileSync(file, `${JSON.stringify(body)}\n${JSON.stringify({ at: 10, body })}\n`)
    const result = await cachelab('simulate', ['simulate', '--provider', 'openai-chat', file], [])
    expect(result.stdout.trim().split('\n')).toHaveLength(2)
    expect(leaksOf('simulate')).toEqual([])
  })

  it('import and calibrate a transcript whose lines hold a key write no key', async () => {
    const imported = join(work, 'import')
    await cachelab(
      'import',
      ['import', TRANSCRIPT, '--lenient', '--out', imported, '--otlp-file', join(imported, 'spans.json')],
      [imported],
    )
    expect(outcomes.import?.code).toBe(0)
    const asProvider = join(work, 'import-as')
    await cachelab(
      'import --as',
      ['import', TRANSCRIPT, '--lenient', '--as', 'openai-chat', '--out', asProvider],
      [asProvider],
    )
    const calibrated = join(work, 'calibrate')
    await cachelab(
      'calibrate',
      ['calibrate', TRANSCRIPT, join(work, 'run-live'), '--lenient', '--out', calibrated],
      [calibrated],
    )
    for (const name of ['import', 'import --as', 'calibrate']) expect(leaksOf(name), name).toEqual([])
  })

  it('report, check, compare, validate and list write no key', async () => {
    await simulated.stop()
    await proxy.stop()
    for (const capture of ['sim-capture', 'live-capture']) {
      const out = join(work, `report-${capture}`)
      await cachelab(
        `report ${capture}`,
        ['report', join(work, capture), '--out', out, '--otlp-file', join(out, 'spans.json')],
        [out],
      )
      expect(outcomes[`report ${capture}`]?.code, capture).toBe(0)
    }
    await cachelab(
      'check',
      ['check', '--baseline', join(work, 'run-sim'), '--out', join(work, 'run-live')],
      [],
    )
    await cachelab(
      'compare',
      ['compare', join(work, 'run-sim', 'summary.csv'), join(work, 'run-live', 'summary.csv')],
      [],
    )
    // A session log with a damaged line that holds a key: the problem is named, the key not.
    const logs = join(work, 'logs')
    mkdirSync(logs)
    writeFileSync(
      join(logs, 'damaged.jsonl'),
      `${readFileSync(join(work, 'run-sim', 'sessions', firstSessionLog(join(work, 'run-sim', 'sessions'))), 'utf8')}{"seq": "${INPUT.body}", "api_key": "${INPUT.body}"\n`,
    )
    await cachelab('validate', ['validate', join(work, 'run-live', 'sessions'), logs], [])
    await cachelab('list', ['list', '--scenarios', SCENARIO], [])
    for (const name of ['report sim-capture', 'report live-capture', 'check', 'compare', 'validate', 'list'])
      expect(leaksOf(name), name).toEqual([])
  })

  it('the servers themselves printed and wrote no key', () => {
    expect(leaksOf('serve (sim)')).toEqual([])
    expect(leaksOf('serve --upstream live')).toEqual([])
    // The scan can fail: a sentinel that is there is found.
    expect(findSentinels([join(cwd, '.env')], {}, NEEDLES).length).toBeGreaterThan(0)
  })

  it('every command of the CLI ran', () => {
    const commands = new Set(Object.keys(outcomes).map((name) => name.split(' ')[0]))
    expect([...commands].sort()).toEqual(
      [
        'calibrate',
        'check',
        'compare',
        'import',
        'list',
        'record',
        'report',
        'run',
        'serve',
        'simulate',
        'validate',
      ].sort(),
    )
  })
})

// Keep the compatible providers' key variables in view: .env.example must name each one.
it('.env.example names the key variable of every compatible provider', () => {
  for (const provider of compatibleProviders()) expect(KEY_VARIABLES).toContain(provider.keyVariable)
})
