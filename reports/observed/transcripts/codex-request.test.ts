import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CacheSimulators } from '../../../providers/sim/index.ts'
import { CodexReading, readCodex } from './codex.ts'
import { CODEX_ESTIMATED, CodexHistory } from './codex-request.ts'
import { readJsonRecords } from './lines.ts'
import { predictObserved, replayAgreement, replayObserved } from './replay.ts'
import type { ObservedRequest } from './types.ts'

const testdata = (name: string) => join(import.meta.dirname, 'testdata', name)
const SAMPLES = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'fixtures', 'transcripts')
const options = { lenient: false, onProblem: () => {} }

async function read(file: string): Promise<ObservedRequest[]> {
  const requests: ObservedRequest[] = []
  for await (const request of readCodex(file, options)) requests.push(request)
  return requests
}

type Item = Record<string, unknown>
const inputOf = (request: ObservedRequest | undefined) => (request?.request?.body.input ?? []) as Item[]
/** An item in short: its type (and role), or a message's first text. */
const shortly = (item: Item) => {
  const content = Array.isArray(item.content) ? (item.content[0] as Item | undefined) : undefined
  return item.type === 'message' ? `${String(item.role)}: ${String(content?.text)}` : String(item.type)
}

describe('readCodex rebuilding request bodies', () => {
  it('gives every request of a rollout with base instructions a Responses body', async () => {
    const requests = await read(testdata('codex-rebuild.jsonl'))
    expect(requests).toHaveLength(4)
    for (const request of requests) {
      expect(request.request?.api).toBe('openai-responses')
      expect(request.request?.body).toMatchObject({
        model: 'gpt-5.1-codex',
        instructions: expect.stringMatching(/^You are a careful gardening assistant\. .*Rule 120: /),
        prompt_cache_key: '0199bbbb-0000-7000-8000-000000000002',
        reasoning: { effort: 'medium', summary: 'auto' },
      })
      expect(request.request?.body.tools).toBeUndefined()
      expect(request.request?.estimated).toBe(CODEX_ESTIMATED)
    }
  })

  it('sends the history up to the last item the client added, whichever side of the count the outputs were written', async () => {
    const [first, second, third, fourth] = await read(testdata('codex-rebuild.jsonl'))
    const environment = 'user: <environment_context>\n  <cwd>/work/garden</cwd>\n</environment_context>'
    // The first count was written before its own outputs (Codex 0.40): none of them is in its input.
    expect(inputOf(first).map(shortly)).toEqual([environment, 'user: List the beds.'])
    // The second request carries them back, the tool output after them, but not its own answer.
    expect(inputOf(second).map(shortly)).toEqual([
      environment,
      'user: List the beds.',
      'reasoning',
      'function_call',
      'function_call_output',
    ])
    // After the compaction the history is its replacement, then the new user message.
    expect(inputOf(third).map(shortly)).toEqual([
      'user: List the beds.',
      expect.stringMatching(/^user: Summary: two beds, north and south\. /),
      'user: Water the north bed.',
    ])
    // Custom tool calls and their outputs are sent; a ghost snapshot stays local.
    expect(inputOf(fourth).map(shortly).slice(3)).toEqual(['custom_tool_call', 'custom_tool_call_output'])
  })

  it('stands in for a reasoning item’s encrypted content with its response’s reasoning tokens', async () => {
    const [, second] = await read(testdata('codex-rebuild.jsonl'))
    const reasoning = inputOf(second).find((item) => item.type === 'reasoning')
    expect(reasoning).toEqual({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: '**Looking at the beds**' }],
      content: null,
      // The first response recorded 20 reasoning tokens, its count written before its outputs.
      encrypted_content: ' x'.repeat(20),
    })
  })

  it('sizes reasoning written before its response’s count by that count (newer Codex)', () => {
    const history = new CodexHistory()
    history.add({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Plant beans.' }] })
    history.add({ type: 'reasoning', summary: [], encrypted_content: 'opaque' })
    history.add({ type: 'function_call', name: 'plant', arguments: '{}', call_id: 'call_1' })
    history.count(7)
    history.add({ type: 'function_call_output', call_id: 'call_1', output: 'planted' })
    history.count(0)
    const request = history.request({ instructions: 'Be kind.', model: 'gpt-5-codex', conversation: 'c' })
    const items = inputOf({ request } as ObservedRequest)
    expect(items.map(shortly)).toEqual([
      'user: Plant beans.',
      'reasoning',
      'function_call',
      'function_call_output',
    ])
    expect(items[1]).toEqual({ type: 'reasoning', summary: [], encrypted_content: ' x x x x x x x' })
  })

  it('rebuilds bodies the OpenAI simulator accepts, request after request', async () => {
    const simulators = new CacheSimulators()
    const requests = await read(testdata('codex-rebuild.jsonl'))
    const inputs = requests.map((request, index) => {
      const wire = request.request as NonNullable<ObservedRequest['request']>
      return simulators.simulate(wire.api, {
        body: wire.body,
        at: index * 2,
        output: { role: 'assistant', content: [] },
        outputTokens: request.usage.output,
      }).counts.input
    })
    expect(inputs.every((input) => input > 20)).toBe(true)
    // The second request extends the first, the fourth the third.
    expect(inputs[1]).toBeGreaterThan(inputs[0] as number)
    expect(inputs[3]).toBeGreaterThan(inputs[2] as number)
  })

  it('replays every rebuilt request, yet gives cachelab import no prediction: the bodies lack the tools', async () => {
    const requests = await read(testdata('codex-rebuild.jsonl'))
    expect(requests.every((request) => request.request?.withoutTools === true)).toBe(true)
    expect(predictObserved(requests).size).toBe(0)
    const replayed = replayObserved(requests)
    expect(replayed.map((each) => each.predicted?.write)).toEqual([0, 0, 0, 0])
    const reads = replayed.map((each) => each.predicted?.read ?? Number.NaN)
    // The first is cold; the second extends it; after the compaction only the instructions' blocks are
    // read (no more than the second read); the fourth extends the third.
    expect(reads[0]).toBe(0)
    expect(reads[1]).toBeGreaterThanOrEqual(1024)
    expect(reads[2]).toBeGreaterThanOrEqual(1024)
    expect(reads[2]).toBeLessThanOrEqual(reads[1] as number)
    expect(reads[3]).toBeGreaterThan(reads[2] as number)
  })

  it('rebuilds no body where the rollout recorded no instructions', async () => {
    const requests = await read(testdata('codex-basic.jsonl'))
    expect(requests.length).toBeGreaterThan(0)
    expect(requests.some((request) => request.request !== undefined)).toBe(false)
  })

  it('keeps only the summary of a compaction that recorded no replacement history, and says so', () => {
    const history = new CodexHistory()
    history.add({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Plant beans.' }] })
    history.compact({ message: 'Beans were planted.' })
    const request = history.request({ instructions: 'Be kind.', model: 'gpt-5-codex', conversation: 'c' })
    expect(inputOf({ request } as ObservedRequest).map(shortly)).toEqual(['user: Beans were planted.'])
    expect(request?.estimated).toContain('summary alone')
  })
})

/** The real samples recorded no instructions: a stand-in lets the simulator be measured on them. */
async function readWithStandIn(file: string): Promise<ObservedRequest[]> {
  const reading = new CodexReading(file, options, { standInInstructions: 'You are Codex.' })
  const requests: ObservedRequest[] = []
  for await (const record of readJsonRecords(file, options)) requests.push(...reading.accept(record))
  requests.push(...reading.finish())
  return requests
}

describe.skipIf(!existsSync(SAMPLES))('rebuilt Codex bodies on the real samples', () => {
  const samples = existsSync(SAMPLES)
    ? readdirSync(SAMPLES).filter((name) => name.startsWith('codex-jnarowski-'))
    : []

  it.each(samples)('%s: recorded no instructions, so no body', async (name) => {
    const requests = await read(join(SAMPLES, name))
    expect(requests.some((request) => request.request !== undefined)).toBe(false)
  })

  it.each([
    ['codex-jnarowski-rollout-01997e76.jsonl', 393],
    ['codex-jnarowski-rollout-01997ea4.jsonl', 52],
    ['codex-jnarowski-rollout-01998190.jsonl', 254],
  ])('%s: the last request sends the %i items the independent count finds', async (name, items) => {
    const requests = await readWithStandIn(join(SAMPLES, name))
    expect(inputOf(requests.at(-1))).toHaveLength(items)
  })

  it('replays every request with a stand-in system prompt: the rebuilt input misses a nearly steady head', async () => {
    const tallies: Record<string, unknown> = {}
    for (const name of samples) {
      const requests = await readWithStandIn(join(SAMPLES, name))
      const replayed = replayObserved(requests)
      expect(replayed.every((each) => each.predicted !== undefined)).toBe(true)
      // What the rollout does not hold (the real system prompt, the tool schemas) is a head of about
      // 2,500 tokens; it drifts by a few hundred at some new turns (after interrupted ones), no more.
      const missing = replayed.map((each) => each.recorded.input - (each.predicted?.input ?? 0))
      tallies[name] = {
        requests: requests.length,
        missingHead: [Math.min(...missing), Math.max(...missing)],
        read: replayAgreement(replayed),
        uncached: replayAgreement(replayed, { measure: 'uncached' }),
      }
    }
    // The figures the note reports.
    console.log(JSON.stringify(tallies))
    for (const tally of Object.values(tallies) as Array<{ missingHead: [number, number] }>)
      expect(tally.missingHead[1] - tally.missingHead[0]).toBeLessThan(1536)
  })
})
