import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import { afterEach, describe, expect, it } from 'vitest'
import { fillerText } from '../harness/filler.ts'
import { startLoopback } from '../providers/mock/loopback.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import { CaptureWriter } from '../reports/observed/capture/store.ts'
import { CaptureTracker } from '../reports/observed/capture/tracker.ts'
import { FIXED_EPOCH_MS, type OtlpTraceRequest } from '../reports/otel.ts'
import { parseStepsCsv } from '../reports/parse.ts'
import { deadEndpoint, receivedSpans, startReceiver } from './otel-testing.ts'
import { runCli, withEnv } from './testing.ts'

let closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.map((close) => close()))
  closers = []
})

const tempDir = () => mkdtempSync(join(tmpdir(), 'cachelab-otel-cli-'))
const spansInFile = (file: string) =>
  receivedSpans(JSON.parse(readFileSync(file, 'utf8')) as OtlpTraceRequest)
const FIXED_EPOCH_NS = BigInt(FIXED_EPOCH_MS) * 1_000_000n

describe('cachelab run --otlp-file / --otlp-endpoint', () => {
  it('writes the run as OTLP JSON and sends it to the endpoint: one span per request with the cache attributes', async () => {
    const receiver = await startReceiver()
    closers.push(receiver.close)
    const out = tempDir()
    const file = join(out, 'traces.json')
    const { code, stdout, stderr } = await runCli([
      'run',
      '--scenario',
      'append-only',
      '--provider',
      'openai-chat',
      '--out',
      out,
      '--otlp-file',
      file,
      '--otlp-endpoint',
      receiver.url,
    ])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const steps = parseStepsCsv(readFileSync(join(out, 'steps.csv'), 'utf8'), 'steps.csv')
    expect(stdout).toContain(`otel: ${steps.length + 1} spans in 1 trace → `)
    expect(stdout).toContain(`${receiver.url}/v1/traces`)
    const written = spansInFile(file)
    const sent = receiver.received.flatMap((request) => receivedSpans(request.body))
    expect(sent.map((span) => span.spanId)).toEqual(written.map((span) => span.spanId))
    const calls = written.filter((span) => span.kind === 3)
    expect(calls).toHaveLength(steps.length)
    expect(calls.map((span) => Number(span.values['gen_ai.usage.cache_read.input_tokens']))).toEqual(
      steps.map((row) => row.cacheReadTokens),
    )
    expect(calls.map((span) => Number(span.values['gen_ai.usage.input_tokens']))).toEqual(
      steps.map((row) => row.cacheReadTokens + row.cacheWriteTokens + row.uncachedTokens),
    )
    expect(calls.some((span) => Number(span.values['gen_ai.usage.cache_read.input_tokens']) > 0)).toBe(true)
    expect(calls.every((span) => span.values['gen_ai.provider.name'] === 'openai')).toBe(true)
    // A simulated run sits at the fixed epoch: its first request at 2000-01-01T00:00:00Z.
    expect(BigInt(calls[0]?.startTimeUnixNano ?? 0)).toBe(FIXED_EPOCH_NS)
  })

  it('writes the same spans on a second simulated run under new trace ids, and adds what it exported to --json', async () => {
    const out = tempDir()
    const argv = ['run', '--scenario', 'append-only', '--provider', 'deepseek', '--out', out, '--json']
    const first = await runCli([...argv, '--otlp-file', join(out, 'a.json'), '--otel-names', 'openinference'])
    await runCli([...argv, '--otlp-file', join(out, 'b.json'), '--otel-names', 'openinference'])
    expect(first.code).toBe(0)
    const [a, b] = ['a.json', 'b.json'].map((name) => spansInFile(join(out, name)))
    const withoutIds = (spans: typeof a) =>
      spans?.map(({ traceId: _t, spanId: _s, parentSpanId: _p, ...span }) => span)
    expect(withoutIds(a)).toEqual(withoutIds(b))
    // Two runs are two traces, though the run id is the same: a backend never merges their spans.
    const traces = (spans: typeof a) => new Set(spans?.map((span) => span.traceId))
    expect(traces(a).size).toBe(1)
    expect([...traces(a)].some((id) => traces(b).has(id))).toBe(false)
    expect(
      a?.every((span) => !span.parentSpanId || a.some((root) => root.spanId === span.parentSpanId)),
    ).toBe(true)
    expect(JSON.parse(first.stdout).otel).toMatchObject({ traces: 1, file: join(out, 'a.json') })
    const call = spansInFile(join(out, 'a.json')).find((span) => span.kind === 3)
    expect(call?.values).toHaveProperty('llm.token_count.prompt_details.cache_read')
    expect(call?.values).not.toHaveProperty('gen_ai.usage.input_tokens')
  })

  it('keeps its files and its exit code when the endpoint cannot be reached, with one warning line', async () => {
    const out = tempDir()
    const endpoint = await deadEndpoint()
    const { code, stdout, stderr } = await withEnv({ OTEL_EXPORTER_OTLP_TIMEOUT: '300' }, () =>
      runCli([
        'run',
        '--scenario',
        'append-only',
        '--provider',
        'anthropic',
        '--out',
        out,
        '--otlp-endpoint',
        endpoint,
      ]),
    )
    expect(code).toBe(0)
    expect(stderr).toMatch(
      new RegExp(
        `^cachelab: OTLP export to ${endpoint}/v1/traces failed \\([^\\n]*ECONNREFUSED[^\\n]*\\); the other outputs are written\\n$`,
      ),
    )
    expect(stdout).toContain(`not ${endpoint}/v1/traces (failed)`)
    expect(existsSync(join(out, 'steps.csv'))).toBe(true)
  })

  it('refuses bad export flags before running anything', async () => {
    const out = tempDir()
    writeFileSync(join(out, 'plain'), 'a file')
    const cases: Array<[string[], string]> = [
      [
        ['--otlp-file', join(out, 't.json'), '--otel-names', 'jaeger'],
        '--otel-names "jaeger": expected genai, openinference, both',
      ],
      [['--otel-names', 'both'], '--otel-names needs --otlp-file or --otlp-endpoint'],
      [
        ['--otlp-file', join(out, 't.json'), '--otel-epoch', 'yesterday'],
        '--otel-epoch "yesterday": expected fixed, now or an ISO 8601 time',
      ],
      [['--otlp-endpoint', 'localhost:4318'], 'is not an http or https URL'],
      [['--otlp-file', join(out, 'plain', 't.json')], 'is not a directory'],
    ]
    for (const [flags, message] of cases) {
      const { code, stderr } = await runCli([
        'run',
        '--scenario',
        'append-only',
        '--provider',
        'anthropic',
        '--out',
        join(out, 'run'),
        ...flags,
      ])
      expect(code).toBe(2)
      expect(stderr).toContain(message)
    }
    expect(existsSync(join(out, 'run', 'steps.csv'))).toBe(false)
  })
})

describe('cachelab report --otlp-file / --otlp-endpoint', () => {
  const STARTED = '2026-11-30T09:00:00.000Z'

  /** A three-turn Anthropic conversation recorded by the loopback server into a new capture directory. */
  async function capture(): Promise<string> {
    const dir = tempDir()
    const writer = CaptureWriter.open(
      dir,
      { id: 'otel-capture', started: STARTED, upstream: 'sim', bodies: false },
      () => {},
    )
    const linearizer = new CacheSimulators()
    const tracker = new CaptureTracker({
      linearize: (api, body) => linearizer.linearize(api, body),
      sink: (exchange) => writer.write(exchange),
    })
    const server = await startLoopback({ upstream: 'sim', port: 0, capture: tracker })
    const client = new Anthropic({ baseURL: server.baseURLs.anthropic, apiKey: 'test-key' })
    const system = fillerText(2_000, 'otel-system')
    const messages: Anthropic.MessageParam[] = []
    try {
      for (let turn = 1; turn <= 3; turn += 1) {
        messages.push({
          role: 'user',
          content: `Question ${turn}: ${fillerText(30, `otel-question-${turn}`)}`,
        })
        const reply = await client.messages.create({
          model: 'claude-sonnet-4-6',
          max_tokens: 128,
          system: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }],
          messages: [...messages],
        })
        messages.push({ role: 'assistant', content: reply.content })
      }
    } finally {
      await server.close()
    }
    return dir
  }

  it('exports a capture as one trace with a span per request, timed from when recording began', async () => {
    const dir = await capture()
    const receiver = await startReceiver()
    closers.push(receiver.close)
    const file = join(dir, 'traces.json')
    const { code, stdout } = await runCli([
      'report',
      dir,
      '--otlp-file',
      file,
      '--otlp-endpoint',
      `${receiver.url}/v1/traces`,
    ])
    expect(code).toBe(0)
    expect(stdout).toContain('otel: 4 spans in 1 trace → ')
    const spans = spansInFile(file)
    const calls = spans.filter((span) => span.kind === 3)
    expect(calls.map((span) => span.name)).toEqual(Array(3).fill('chat claude-sonnet-4-6'))
    expect(
      calls
        .map((span) => Number(span.values['gen_ai.usage.cache_read.input_tokens']))
        .slice(1)
        .every((read) => read > 0),
    ).toBe(true)
    expect(calls.every((span) => span.values['gen_ai.usage.cache_creation.input_tokens'] !== undefined)).toBe(
      true,
    )
    const startedNs = BigInt(Date.parse(STARTED)) * 1_000_000n
    const first = BigInt(calls[0]?.startTimeUnixNano ?? 0)
    expect(first >= startedNs && first < startedNs + 60_000_000_000n).toBe(true)
    expect(receiver.received.flatMap((request) => receivedSpans(request.body))).toHaveLength(4)
  })

  it('moves the spans to the fixed epoch with --otel-epoch fixed', async () => {
    const dir = await capture()
    const file = join(dir, 'fixed.json')
    expect((await runCli(['report', dir, '--otlp-file', file, '--otel-epoch', 'fixed'])).code).toBe(0)
    const first = BigInt(spansInFile(file).find((span) => span.kind === 3)?.startTimeUnixNano ?? 0)
    expect(first >= FIXED_EPOCH_NS && first < FIXED_EPOCH_NS + 60_000_000_000n).toBe(true)
  })
})
