import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { type AnthropicCacheRules, simulationModel, withCacheRules } from '../catalog.ts'
import { AnthropicCacheSimulator, automaticBreakpoint } from './anthropic.ts'
import { linearizeAnthropic } from './linearize-anthropic.ts'
import { TokenCounter } from './tokens.ts'
import { SimulatorRejection } from './types.ts'

const reply: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }
const MODEL = 'claude-sonnet-4-6'

type Ttl = '5m' | '1h'
type Body = Record<string, unknown>

/** A text block of 150 tokens, the same for the same number; 153 with the message framing. */
const textBlock = (number: number, ttl?: Ttl) => ({
  type: 'text',
  text: fillerText(150, `block-${number}`),
  ...(ttl !== undefined ? { cache_control: { type: 'ephemeral', ttl } } : {}),
})

/** `count` one-block messages; block numbers (1-based) in `marks` carry cache_control. */
function conversation(count: number, marks: Record<number, Ttl> = {}, extra: Body = {}): Body {
  return {
    model: MODEL,
    max_tokens: 1024,
    messages: Array.from({ length: count }, (_, index) => ({
      role: index % 2 === 0 ? 'user' : 'assistant',
      content: [textBlock(index + 1, marks[index + 1])],
    })),
    ...extra,
  }
}

/** The first bytes of a PNG of the given size, base64: enough for the size read from its header. */
function pngHeader(width: number, height: number): string {
  const head = Buffer.alloc(33)
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(head, 0)
  head.writeUInt32BE(13, 8)
  head.write('IHDR', 12, 'ascii')
  head.writeUInt32BE(width, 16)
  head.writeUInt32BE(height, 20)
  return head.toString('base64')
}

function simulatorWith(rules: Partial<AnthropicCacheRules>) {
  return new AnthropicCacheSimulator({
    models: [withCacheRules<AnthropicCacheRules>(simulationModel('anthropic', MODEL), rules)],
  })
}

const run = (simulator: AnthropicCacheSimulator, body: Body, at: number) =>
  simulator.simulate({ body, at, output: reply })

describe("the documentation's lookback example", () => {
  it('reads the nearest earlier write within 20 positions and misses one position beyond', () => {
    const simulator = new AnthropicCacheSimulator()
    const turn1 = run(simulator, conversation(10, { 10: '5m' }), 0)
    expect(turn1.counts.read).toBe(0)
    expect(turn1.counts.write).toBe(turn1.prompt.cumulative[9])

    const turn2 = run(simulator, conversation(15, { 15: '5m' }), 10)
    expect(turn2.counts.read).toBe(turn1.prompt.cumulative[9])
    expect(turn2.counts.read + turn2.counts.write).toBe(turn2.prompt.cumulative[14])

    const turn3 = run(simulator, conversation(35, { 35: '5m' }), 20)
    expect(turn3.counts.read).toBe(0)
    expect(turn3.trace.shortfall).toBe('lookback-miss')
    expect(turn3.trace.matched).toBe(turn2.prompt.cumulative[14])
  })

  it('hits the turn-2 entry when a second breakpoint sits on block 15', () => {
    const simulator = new AnthropicCacheSimulator()
    run(simulator, conversation(10, { 10: '5m' }), 0)
    const turn2 = run(simulator, conversation(15, { 15: '5m' }), 10)
    const turn3 = run(simulator, conversation(35, { 15: '5m', 35: '5m' }), 20)
    expect(turn3.counts.read).toBe(turn2.prompt.cumulative[14])
    expect(turn3.trace.shortfall).toBeUndefined()
  })
})

describe('limits', () => {
  it('refuses a fifth breakpoint with the 400 body the API sends', () => {
    const simulator = new AnthropicCacheSimulator()
    const body = conversation(6, { 1: '5m', 2: '5m', 3: '5m', 4: '5m', 5: '5m' })
    let rejection: unknown
    try {
      run(simulator, body, 0)
    } catch (error) {
      rejection = error
    }
    expect(rejection).toBeInstanceOf(SimulatorRejection)
    expect((rejection as SimulatorRejection).status).toBe(400)
    expect(JSON.stringify((rejection as SimulatorRejection).body)).toBe(
      '{"type":"error","error":{"type":"invalid_request_error","message":"A maximum of 4 blocks with cache_control may be provided. Found 5."}}',
    )
  })

  it('counts the automatic breakpoint among the four slots', () => {
    const simulator = new AnthropicCacheSimulator()
    const body = conversation(
      6,
      { 1: '5m', 2: '5m', 3: '5m', 4: '5m' },
      { cache_control: { type: 'ephemeral' } },
    )
    expect(() => run(simulator, body, 0)).toThrow('Found 5.')
  })

  it('refuses a 1h breakpoint after a 5m one', () => {
    const simulator = new AnthropicCacheSimulator()
    expect(() => run(simulator, conversation(10, { 5: '5m', 10: '1h' }), 0)).toThrow(SimulatorRejection)
    expect(() => run(simulator, conversation(10, { 5: '1h', 10: '5m' }), 0)).not.toThrow()
  })

  it('writes nothing below the minimum and returns no error', () => {
    const simulator = new AnthropicCacheSimulator()
    const small = conversation(4, { 4: '5m' })
    const first = run(simulator, small, 0)
    const second = run(simulator, small, 10)
    for (const result of [first, second]) {
      expect(result.counts.read).toBe(0)
      expect(result.counts.write).toBe(0)
      expect(result.counts.uncached).toBe(result.counts.input)
      expect(result.trace.shortfall).toBe('below-minimum')
    }
  })
})

describe('lifetimes', () => {
  it('expires a 5-minute entry at 300 s but keeps a 1-hour one', () => {
    const short = new AnthropicCacheSimulator()
    run(short, conversation(10, { 10: '5m' }), 0)
    expect(run(short, conversation(10, { 10: '5m' }), 299).counts.read).toBeGreaterThan(0)
    const long = new AnthropicCacheSimulator()
    run(long, conversation(10, { 10: '1h' }), 0)
    expect(run(long, conversation(10, { 10: '1h' }), 3599).counts.read).toBeGreaterThan(0)

    const expired = new AnthropicCacheSimulator()
    run(expired, conversation(10, { 10: '5m' }), 0)
    const late = run(expired, conversation(10, { 10: '5m' }), 300)
    expect(late.counts.read).toBe(0)
    expect(late.trace.shortfall).toBe('ttl-expired')
  })

  it('refreshes an entry on read, measured from the reading request', () => {
    const simulator = new AnthropicCacheSimulator()
    const body = conversation(10, { 10: '5m' })
    run(simulator, body, 0)
    expect(run(simulator, body, 200).counts.read).toBeGreaterThan(0)
    const afterRefresh = run(simulator, body, 450)
    expect(afterRefresh.counts.read).toBeGreaterThan(0)
    expect(afterRefresh.trace.carry.liveUntil).toBe(750)
  })
})

describe('tool runs in the lookback', () => {
  /** One user message, then 15 parallel tool calls and their 15 results; the breakpoint on the last result. */
  function toolBody(withCalls: boolean): Body {
    const messages: Body[] = [
      { role: 'user', content: [textBlock(1), textBlock(2, withCalls ? undefined : '5m')] },
    ]
    if (withCalls) {
      messages.push({
        role: 'assistant',
        content: Array.from({ length: 15 }, (_, index) => ({
          type: 'tool_use',
          id: `toolu_${index}`,
          name: 'read_file',
          input: { path: `src/file${index}.ts` },
        })),
      })
      messages.push({
        role: 'user',
        content: Array.from({ length: 15 }, (_, index) => ({
          type: 'tool_result',
          tool_use_id: `toolu_${index}`,
          content: fillerText(40, `result-${index}`),
          ...(index === 14 ? { cache_control: { type: 'ephemeral' } } : {}),
        })),
      })
    }
    return { model: MODEL, max_tokens: 1024, messages }
  }

  it('counts a run of tool_use and a run of tool_result blocks as one position each', () => {
    const collapsed = simulatorWith({ collapseToolRuns: true, minTokens: 100 })
    const first = run(collapsed, toolBody(false), 0)
    const hit = run(collapsed, toolBody(true), 10)
    expect(hit.counts.read).toBe(first.counts.write)
    expect(hit.counts.read).toBeGreaterThan(0)
  })

  it('misses the same entry when every block counts (the older rule)', () => {
    const separate = simulatorWith({ collapseToolRuns: false, minTokens: 100 })
    run(separate, toolBody(false), 0)
    const miss = run(separate, toolBody(true), 10)
    expect(miss.counts.read).toBe(0)
    expect(miss.trace.shortfall).toBe('lookback-miss')
  })
})

describe('automatic caching', () => {
  it('moves the breakpoint forward across an append-only conversation', () => {
    const simulator = new AnthropicCacheSimulator()
    const automatic = { cache_control: { type: 'ephemeral' } }
    let previousCached = 0
    for (let count = 8; count <= 20; count += 2) {
      const result = run(simulator, conversation(count, {}, automatic), count * 10)
      expect(result.counts.read).toBe(previousCached)
      expect(result.counts.uncached).toBe(result.prompt.trailing)
      previousCached = result.counts.read + result.counts.write
    }
    expect(previousCached).toBeGreaterThan(2900)
  })

  it('is a no-op on a last block that already has the same TTL, and a 400 with another TTL', () => {
    const simulator = new AnthropicCacheSimulator()
    const same = conversation(10, { 10: '5m' }, { cache_control: { type: 'ephemeral', ttl: '5m' } })
    expect(run(simulator, same, 0).counts.write).toBeGreaterThan(0)
    const other = conversation(10, { 10: '1h' }, { cache_control: { type: 'ephemeral', ttl: '5m' } })
    expect(() => run(simulator, other, 1)).toThrow(SimulatorRejection)
  })

  it('walks back over an empty last text block', () => {
    const simulator = new AnthropicCacheSimulator()
    const body = conversation(10, {}, { cache_control: { type: 'ephemeral' } })
    ;(body.messages as Body[]).push({ role: 'user', content: [{ type: 'text', text: '' }] })
    const layout = linearizeAnthropic(body, new TokenCounter(), 1)
    expect(automaticBreakpoint(layout)).toMatchObject({ index: 9, breakpoint: { explicit: false } })
    expect(simulator.linearize(body).segments[10]?.breakpoint).toBeUndefined()
  })
})

describe('usage arithmetic', () => {
  it('splits mixed-TTL writes at the highest 1h breakpoint after the read', () => {
    const simulator = new AnthropicCacheSimulator()
    const first = run(simulator, conversation(12, { 8: '1h', 12: '5m' }), 0)
    const through8 = first.prompt.cumulative[7] ?? 0
    const through12 = first.prompt.cumulative[11] ?? 0
    expect(first.counts.write1h).toBe(through8)
    expect(first.counts.write5m).toBe(through12 - through8)
    expect(first.counts.uncached).toBe(first.prompt.trailing)

    const second = run(simulator, conversation(16, { 8: '1h', 16: '5m' }), 10)
    expect(second.counts.read).toBe(through12)
    expect(second.counts.write1h).toBe(0)
    expect(second.counts.write5m).toBe((second.prompt.cumulative[15] ?? 0) - through12)
  })

  it('keeps tools and system but rewrites messages when tool_choice changes', () => {
    const simulator = new AnthropicCacheSimulator()
    const request = (toolChoice: Body) => ({
      model: MODEL,
      max_tokens: 1024,
      tools: [
        {
          name: 'grep',
          description: 'Search files.',
          input_schema: { type: 'object', properties: { pattern: { type: 'string' } } },
        },
      ],
      system: [{ type: 'text', text: fillerText(1500, 'system'), cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [textBlock(1), textBlock(2, '5m')] }],
      tool_choice: toolChoice,
    })
    const first = run(simulator, request({ type: 'auto' }), 0)
    const systemEnd = first.prompt.cumulative[1] ?? 0
    const same = run(simulator, request({ type: 'auto' }), 10)
    expect(same.counts.read).toBe(first.counts.write)
    const changed = run(simulator, request({ type: 'any' }), 20)
    expect(changed.counts.read).toBe(systemEnd)
    expect(changed.counts.write).toBe((changed.prompt.cumulative[3] ?? 0) - systemEnd)
  })

  it('keeps tools and system but rewrites messages when an image is added anywhere', () => {
    const simulator = new AnthropicCacheSimulator()
    const system = [{ type: 'text', text: fillerText(1500, 'system'), cache_control: { type: 'ephemeral' } }]
    const base = conversation(10, { 10: '5m' }, { system })
    const first = run(simulator, base, 0)
    const systemEnd = first.prompt.cumulative[0] ?? 0
    const withImage = conversation(12, { 12: '5m' }, { system })
    ;(withImage.messages as Body[]).push({
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pngHeader(200, 150) } },
      ],
    })
    const next = run(simulator, withImage, 10)
    expect(next.counts.read).toBe(systemEnd)
    const image = next.prompt.segments[13]
    expect((image?.tokens ?? 0) - (image?.framing ?? 0)).toBe(Math.ceil((200 * 150) / 750))
  })

  it('ignores cache_control markers when comparing content', () => {
    const simulator = new AnthropicCacheSimulator()
    const tool = { name: 'grep', description: 'Search files.', input_schema: { type: 'object' } }
    const marked = simulator.linearize(
      conversation(3, { 2: '5m' }, { tools: [{ ...tool, cache_control: { type: 'ephemeral' } }] }),
    )
    const plain = simulator.linearize(conversation(3, {}, { tools: [tool] }))
    expect(marked.segments[0]?.breakpoint?.ttl).toBe('5m')
    const identity = (segment: { frame: string; text: string }) => [segment.frame, segment.text]
    expect(marked.segments.map(identity)).toEqual(plain.segments.map(identity))
  })
})

describe('invariants', () => {
  /** A random append-only session: blocks appended per request (1..19) and the idle gap before it. */
  const session = fc.array(
    fc.record({ append: fc.integer({ min: 1, max: 19 }), gap: fc.integer({ min: 0, max: 299 }) }),
    { minLength: 1, maxLength: 12 },
  )

  const play = (steps: ReadonlyArray<{ append: number; gap: number }>, ttl: Ttl) => {
    const simulator = new AnthropicCacheSimulator()
    let count = 0
    let at = 0
    return steps.map(({ append, gap }) => {
      count += append
      at += gap
      return run(simulator, conversation(count, {}, { cache_control: { type: 'ephemeral', ttl } }), at)
    })
  }

  it('never reads less than the previous request cached, within TTL and lookback', () => {
    fc.assert(
      fc.property(session, fc.constantFrom<Ttl>('5m', '1h'), (steps, ttl) => {
        const results = play(steps, ttl)
        for (let index = 1; index < results.length; index += 1) {
          const previous = results[index - 1]
          const current = results[index]
          if (previous === undefined || current === undefined) continue
          expect(current.counts.read).toBeGreaterThanOrEqual(previous.counts.read + previous.counts.write)
        }
      }),
      { numRuns: 60 },
    )
  })

  it('splits every request into buckets that sum to its input', () => {
    fc.assert(
      fc.property(session, fc.constantFrom<Ttl>('5m', '1h'), (steps, ttl) => {
        for (const { counts } of play(steps, ttl)) {
          expect(counts.read + counts.write + counts.uncached).toBe(counts.input)
          expect(counts.write5m + counts.write1h).toBe(counts.write)
          expect(counts.uncached).toBeGreaterThanOrEqual(0)
        }
      }),
      { numRuns: 60 },
    )
  })

  it('gives identical usage for identical input', () => {
    fc.assert(
      fc.property(session, (steps) => {
        const one = play(steps, '5m').map((result) => [result.counts, result.trace])
        const two = play(steps, '5m').map((result) => [result.counts, result.trace])
        expect(two).toEqual(one)
      }),
      { numRuns: 30 },
    )
  })
})

describe('requests that repeat earlier message objects', () => {
  it('never carry an earlier request’s automatic breakpoint into a later one', () => {
    const simulator = new AnthropicCacheSimulator()
    const messages: Array<Record<string, unknown>> = [
      { role: 'user', content: [{ type: 'text', text: fillerText(1500, 'repeat') }] },
    ]
    for (let turn = 0; turn < 8; turn += 1) {
      const body = {
        model: 'claude-sonnet-4-6',
        max_tokens: 16,
        cache_control: { type: 'ephemeral' },
        messages: [...messages],
      }
      const result = simulator.simulate({
        body,
        at: turn,
        output: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      })
      // An automatic breakpoint left behind on an earlier last block would add one breakpoint per turn: a 400 by turn 5.
      expect(result.prompt.segments.filter((segment) => segment.breakpoint !== undefined)).toHaveLength(0)
      if (turn > 0) expect(result.counts.read).toBeGreaterThan(1500)
      messages.push(
        { role: 'assistant', content: [{ type: 'text', text: `answer ${turn}` }] },
        { role: 'user', content: [{ type: 'text', text: `question ${turn}` }] },
      )
    }
  })
})

describe('system messages inside messages', () => {
  const withSystemInHistory = (model: string): Body => ({
    model,
    max_tokens: 16,
    system: [{ type: 'text', text: fillerText(1200, 'head') }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Read the parser.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
      { role: 'system', content: [{ type: 'text', text: 'Build mode is on.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Now run the release script.' }] },
    ],
  })
  const rejection = (model: string) => {
    try {
      run(new AnthropicCacheSimulator(), withSystemInHistory(model), 0)
    } catch (error) {
      return error
    }
    return undefined
  }

  it("are the API's 400 on a model whose route reads the system prompt only at the head", () => {
    const error = rejection('claude-sonnet-4-6')
    expect(error).toBeInstanceOf(SimulatorRejection)
    expect(error).toMatchObject({
      status: 400,
      body: {
        type: 'error',
        error: { type: 'invalid_request_error', message: "role 'system' is not supported on this model" },
      },
    })
  })

  it("are refused on a model the catalog does not list, which takes the default model's route", () => {
    expect(rejection('claude-unlisted-9')).toBeInstanceOf(SimulatorRejection)
  })

  it('are accepted, and cached like any message, on a model with the in-history route', () => {
    const simulator = new AnthropicCacheSimulator()
    const first = run(
      simulator,
      { ...withSystemInHistory('claude-opus-4-8'), cache_control: { type: 'ephemeral' } },
      0,
    )
    const second = run(
      simulator,
      { ...withSystemInHistory('claude-opus-4-8'), cache_control: { type: 'ephemeral' } },
      1,
    )
    expect(first.counts.write).toBeGreaterThan(1200)
    expect(second.counts.read).toBe(first.counts.write)
  })

  it('are not checked by a what-if linearization, which names no route', () => {
    const body = withSystemInHistory('claude-sonnet-4-6')
    expect(() => linearizeAnthropic(body, new TokenCounter(), 1)).not.toThrow()
    expect(() => linearizeAnthropic(body, new TokenCounter(), 1, undefined, 'unsupported')).toThrow(
      SimulatorRejection,
    )
  })
})

describe("Claude Code's billing block", () => {
  /** A Claude Code request: the billing block (its `cch` different each time), the prompt, a conversation. */
  const request = (cch: string, turns: number): Body => ({
    model: MODEL,
    max_tokens: 64,
    system: [
      {
        type: 'text',
        text: `x-anthropic-billing-header: cc_version=2.1.328.d69; cc_entrypoint=cli; cch=${cch};`,
      },
      { type: 'text', text: fillerText(2000, 'claude-code-system'), cache_control: { type: 'ephemeral' } },
    ],
    messages: Array.from({ length: turns }, (_, index) => ({
      role: index % 2 === 0 ? 'user' : 'assistant',
      content: [
        {
          type: 'text',
          text: fillerText(300, `turn-${index}`),
          ...(index === turns - 1 ? { cache_control: { type: 'ephemeral' } } : {}),
        },
      ],
    })),
  })

  it('is stripped by Anthropic before caching: a new cch reads the whole previous prefix, the block unbilled', () => {
    const simulator = new AnthropicCacheSimulator()
    const first = run(simulator, request('36ee5', 3), 0)
    const second = run(simulator, request('0aaa9', 5), 1)
    expect(second.counts.read).toBe(first.counts.read + first.counts.write)
    const billed = run(simulatorWith({ billingBlock: 'cached' }), request('36ee5', 3), 0)
    expect(billed.counts.input).toBeGreaterThan(first.counts.input)
  })

  it('is prompt text where the rules say it is cached: a new cch reads nothing', () => {
    const simulator = simulatorWith({ billingBlock: 'cached' })
    run(simulator, request('36ee5', 3), 0)
    expect(run(simulator, request('0aaa9', 5), 1).counts.read).toBe(0)
  })
})
