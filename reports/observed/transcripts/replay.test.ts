import { existsSync, readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { DEEPSEEK_DOCUMENTED, simulationModel } from '../../../providers/catalog.ts'
import { readDsh } from './dsh.ts'
import { type ReplayedRequest, replayAgreement, replayObserved } from './replay.ts'
import type { ObservedRequest, ReadOptions } from './types.ts'

/** DeepSeek's documented mode (exact unit positions): these prompts are shorter than one 128-token read. */
const DOCUMENTED = {
  models: [{ ...simulationModel('deepseek', 'deepseek-v4-flash'), cache: DEEPSEEK_DOCUMENTED }],
}

const testdata = (name: string) => fileURLToPath(new URL(`testdata/${name}`, import.meta.url))
const samples = fileURLToPath(new URL('../../../../shared/fixtures/transcripts/', import.meta.url))

const strict: ReadOptions = {
  lenient: false,
  onProblem: () => {
    throw new Error('a strict read reports no problem')
  },
}

async function readAll(file: string): Promise<ObservedRequest[]> {
  const requests: ObservedRequest[] = []
  for await (const request of readDsh(file, strict)) requests.push(request)
  return requests
}

/** A minimal observed DeepSeek request of `session` at `time` whose body holds `messages`. */
function observed(session: string, time: string, messages: string[]): ObservedRequest {
  return {
    format: 'dsh',
    source: `${session}:${time}`,
    session,
    provider: 'deepseek',
    model: 'deepseek-v4-flash',
    time,
    usage: { input: 10, uncached: 10, cacheRead: 0, output: 1, raw: null },
    events: [],
    request: {
      api: 'deepseek-chat',
      body: {
        model: 'deepseek-v4-flash',
        messages: messages.map((content) => ({ role: 'user', content })),
      },
    },
  }
}

describe('a DSH log with its header, replayed through the DeepSeek simulator', () => {
  it('predicts each step beside what it recorded', async () => {
    const requests = await readAll(testdata('dsh-session.jsonl'))
    const replayed = replayObserved(requests)
    expect(replayed.map((step) => step.source)).toEqual(requests.map((request) => request.source))
    expect(replayed.map((step) => step.recorded)).toEqual(requests.map((request) => request.usage))
    const [first, second, switched, summary, compacted, resumed] = replayed as ReplayedRequest[]
    expect(replayed.map((step) => step.at)).toEqual([0, 0.7, 90.3, undefined, 122.3, 86400.3])
    // Cold, then the tool loop's second step reads past the first request's input: its recorded answer
    // (reasoning and tool call) persisted an output-end unit.
    expect(first?.predicted?.read).toBe(0)
    expect(first?.counterfactual).toBeUndefined()
    expect(second?.predicted?.read).toBeGreaterThan(first?.predicted?.input ?? Number.POSITIVE_INFINITY)
    expect(second?.counterfactual).toEqual({ ideal: second?.predicted?.read, warm: second?.predicted?.read })
    // Another model has its own cache: staying on the first would have read what the tool loop left
    // there. The summarizer call has no body to replay.
    expect(switched?.predicted?.read).toBe(0)
    expect(switched?.counterfactual?.ideal).toBeGreaterThan(0)
    expect(switched?.counterfactual?.ideal).toBe(second?.carry)
    expect(summary?.predicted).toBeUndefined()
    // The compaction rewrote the history after the system prompt: no unit of the earlier requests fits.
    expect(compacted?.predicted?.read).toBe(0)
    // A day later the units are evicted: the warm cache would have read them.
    expect(resumed?.predicted?.read).toBe(0)
    expect(resumed?.counterfactual?.cause).toBe('ttl-expired')
    expect(resumed?.counterfactual?.warm).toBeGreaterThan(0)
  })

  it('persists the output-end unit only from the recorded answer', async () => {
    const requests = await readAll(testdata('dsh-session.jsonl'))
    const withoutAnswers = requests.map(({ answer: _answer, ...request }) => request)
    const [first, second] = replayObserved(withoutAnswers, DOCUMENTED)
    const [, answered] = replayObserved(requests, DOCUMENTED)
    // Without it, the second step reads the first request's input-end unit alone (all but the priming).
    const input = first?.predicted?.input ?? 0
    expect(second?.predicted?.read).toBeGreaterThan(input - 8)
    expect(second?.predicted?.read).toBeLessThanOrEqual(input)
    expect(answered?.predicted?.read).toBeGreaterThan(input)
  })
})

describe('a replay', () => {
  it('runs sessions interleaved in time order, holding a session whose clock stepped back to its file order', () => {
    const requests = [
      observed('a', '2026-01-01T00:00:10.000Z', ['shared opening words for both']),
      observed('a', '2026-01-01T00:00:05.000Z', ['shared opening words for both', 'more']),
      observed('b', '2026-01-01T00:00:00.000Z', ['shared opening words for both']),
    ]
    const replayed = replayObserved(requests, DOCUMENTED)
    expect(replayed.map((step) => step.at)).toEqual([10, 10, 0])
    // b ran first, cold; a's first request, the same prompt, found b's unit.
    expect(replayed[2]?.predicted?.read).toBe(0)
    expect(replayed[0]?.predicted?.read).toBeGreaterThan(0)
  })

  it('reports the refusal of a body the provider would refuse, and predicts nothing for it', () => {
    const marked = (text: string) => ({ type: 'text', text, cache_control: { type: 'ephemeral' } })
    const request: ObservedRequest = {
      ...observed('c', '2026-01-01T00:00:00.000Z', []),
      provider: 'anthropic',
      model: 'claude-sonnet-4-6',
      request: {
        api: 'anthropic-messages',
        body: {
          model: 'claude-sonnet-4-6',
          max_tokens: 100,
          messages: [{ role: 'user', content: ['a', 'b', 'c', 'd', 'e'].map(marked) }],
        },
      },
    }
    const [replayed] = replayObserved([request])
    expect(replayed?.predicted).toBeUndefined()
    expect(replayed?.rejected?.status).toBe(400)
  })

  it('tallies predicted against recorded reads: exact, within a unit, off, unmeasured', () => {
    const step = (recorded: number | undefined, predicted: number | undefined): ReplayedRequest => ({
      source: 's',
      session: 's',
      recorded: {
        input: 1000,
        uncached: 1000 - (recorded ?? 0),
        ...(recorded !== undefined ? { cacheRead: recorded } : {}),
        output: 1,
        raw: null,
      },
      ...(predicted !== undefined
        ? {
            predicted: {
              input: 900,
              read: predicted,
              write: 0,
              write5m: 0,
              write1h: 0,
              uncached: 900,
              output: 1,
            },
          }
        : {}),
    })
    const replayed = [step(512, 512), step(512, 600), step(512, 100), step(undefined, 5), step(5, undefined)]
    expect(replayAgreement(replayed)).toEqual({ exact: 1, withinUnit: 1, off: 1, unmeasured: 2 })
    // Past the read, the predictions are 388, 300 and 800 tokens against 488 recorded.
    expect(replayAgreement(replayed, { measure: 'uncached' })).toEqual({
      exact: 0,
      withinUnit: 1,
      off: 2,
      unmeasured: 2,
    })
  })
})

// The real samples are others' data, read in place; CI's clean clone has none.
describe.skipIf(!existsSync(samples))('the real DSH samples, replayed as one import', () => {
  it('replay every request that carries a body, and print predicted beside recorded', async () => {
    const files = readdirSync(samples).filter((name) => name.startsWith('dsh-') && name.endsWith('.jsonl'))
    expect(files.length).toBeGreaterThan(0)
    const requests: ObservedRequest[] = []
    for (const name of files.sort()) requests.push(...(await readAll(`${samples}${name}`)))
    const replayed = replayObserved(requests)
    const lines: string[] = []
    for (const [index, step] of replayed.entries()) {
      const request = requests[index] as ObservedRequest
      expect(step.predicted !== undefined).toBe(request.request !== undefined)
      if (step.predicted === undefined) continue
      const name = request.source.slice(samples.length)
      lines.push(
        `${name.padEnd(52)} read ${String(step.recorded.cacheRead ?? '-').padStart(6)} / ${String(step.predicted.read).padStart(6)}   input ${String(step.recorded.input).padStart(6)} / ${String(step.predicted.input).padStart(6)}`,
      )
    }
    const reads = replayAgreement(replayed)
    const pastRead = replayAgreement(replayed, { measure: 'uncached' })
    console.log(
      [
        'recorded / predicted per step:',
        ...lines,
        `reads: ${JSON.stringify(reads)}`,
        `input past the read: ${JSON.stringify(pastRead)}`,
      ].join('\n'),
    )
    expect(reads.exact + reads.withinUnit + reads.off + reads.unmeasured).toBe(requests.length)
  })
})
