import { describe, expect, it } from 'vitest'
import { deriveRequest } from './derive.ts'
import type { LlmCall } from './ports.ts'
import type { Arrival, StepScript } from './script.ts'
import { SessionProjection } from './session.ts'
import { resumeTestLoop, say, testLoop, withTool } from './testing.ts'
import type { SessionEvent } from './types.ts'

describe('the loop', () => {
  it('sends exactly the request the log prefix re-derives, on every request', async () => {
    const { loop, world, records, events } = testLoop()
    await loop.turn(withTool('read it'), world)
    world.system = 'You are a changed test agent.'
    await loop.turn(say('again'), world)
    loop.prune({ thresholdChars: 5, keepChars: 4, keep: 'head', skipLastNodes: 2 })
    await loop.turn(withTool('once more'), world)
    expect(records.length).toBeGreaterThanOrEqual(5)
    for (const record of records) {
      const rebuilt = deriveRequest(SessionProjection.fromEvents(events.slice(0, record.logLength)))
      expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(record.call.request))
    }
  })

  it('writes one initial header and no other while nothing changes', async () => {
    const { loop, world, events } = testLoop()
    await loop.turn(withTool('a'), world)
    await loop.turn(say('b'), world)
    const headers = events.filter((event) => event.type === 'request/header')
    expect(headers.map((event) => event.data.reason)).toEqual(['initial'])
  })

  it('logs tool calls and results in order', async () => {
    const { loop, world, events } = testLoop()
    await loop.turn(withTool('a', 'RESULT'), world)
    const types = events.map((event) => event.type)
    expect(types.indexOf('tool/call')).toBeLessThan(types.indexOf('tool/result'))
    const result = events.find((event) => event.type === 'tool/result')
    expect(result?.type === 'tool/result' && result.data.message.text).toBe('RESULT')
  })

  it('records a failed attempt, retries after the delay the provider asked for, and loses nothing', async () => {
    const { loop, world, events, records, port, clock } = testLoop()
    port.failNext({ status: 429, type: 'rate_limit_error', message: 'slow down', retryable: true }, 2000)
    await loop.turn(say('a'), world)
    expect(records.map((record) => [record.call.attempt, record.outcome.ok])).toEqual([
      [0, false],
      [1, true],
    ])
    expect(events.filter((event) => event.type === 'assistant/attempt')).toHaveLength(1)
    expect(events.filter((event) => event.type === 'assistant/message')).toHaveLength(1)
    expect(records[1]?.call.at).toBeCloseTo((records[0]?.call.at ?? 0) + 0.05 + 2, 6)
    expect(clock.now()).toBeGreaterThan(2)
  })

  it('backs off from 0.5 s before the first retry when the provider asks for no delay (retry-after-ms 0)', async () => {
    const { loop, world, records, port } = testLoop()
    port.failNext({ status: 429, type: 'rate_limit_error', message: 'slow down', retryable: true }, 0)
    await loop.turn(say('a'), world)
    const waited = (records[1]?.call.at ?? 0) - (records[0]?.call.at ?? 0) - 0.05
    expect(waited).toBeGreaterThanOrEqual(0.375)
    expect(waited).toBeLessThanOrEqual(0.5)
  })

  it('ends the turn with an error after the last retry', async () => {
    const { loop, world, events, port } = testLoop()
    for (let index = 0; index < 3; index += 1)
      port.failNext({ status: 500, type: 'api_error', message: 'boom', retryable: true })
    const reason = await loop.turn(say('a'), world)
    expect(reason).toBe('error')
    expect(events.filter((event) => event.type === 'assistant/attempt')).toHaveLength(3)
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'error' } })
  })

  it('does not retry a failure the SDK would not retry', async () => {
    const { loop, world, port } = testLoop()
    port.failNext({ status: 400, type: 'invalid_request_error', message: 'bad', retryable: false })
    expect(await loop.turn(say('a'), world)).toBe('error')
    expect(port.calls).toHaveLength(1)
  })

  it('does not compact when asked to retain more nodes than the surface holds', async () => {
    const { loop, world, events } = testLoop()
    await loop.turn(say('a'), world)
    const written = events.length
    expect(await loop.compact(100, 20, world)).toBe(false)
    expect(events).toHaveLength(written)
  })

  it('does not prune a result twice, so a second prune starts no new series', async () => {
    const { loop, world, events } = testLoop()
    await loop.turn(withTool('read', 'x'.repeat(500)), world)
    // The cut (8 characters and the marker) is itself over the threshold.
    const options = { thresholdChars: 10, keepChars: 8, keep: 'head' as const, skipLastNodes: 0 }
    expect(loop.prune(options)).toBe(1)
    await loop.turn(say('b'), world)
    const written = events.length
    expect(loop.prune(options)).toBe(0)
    expect(events).toHaveLength(written)
    await loop.turn(say('c'), world)
    const headers = events.filter((event) => event.type === 'request/header')
    expect(headers.map((event) => event.data.reason)).toEqual(['initial', 'series'])
  })

  it('writes no replacement identical to the live result', async () => {
    const { loop, world, events } = testLoop()
    await loop.turn(withTool('read', 'x'.repeat(50)), world)
    const written = events.length
    expect(loop.prune({ thresholdChars: 10, keepChars: 50, keep: 'head', skipLastNodes: 0 })).toBe(0)
    expect(events).toHaveLength(written)
  })

  it('resumes over an existing log with a resume header and continues the turn count', async () => {
    const first = testLoop()
    await first.loop.turn(say('a'), first.world)
    const resumed = resumeTestLoop(first)
    await resumed.turn(say('b'), first.world)
    const headers = first.events
      .filter((event) => event.type === 'request/header')
      .map((event) => event.data.reason)
    expect(headers).toEqual(['initial', 'resume'])
    expect(first.events.some((event) => event.type === 'session/end-seed')).toBe(true)
    expect(
      first.events.filter((event) => event.type === 'turn/start').map((event) => event.data.turn),
    ).toEqual([1, 2])
  })
})

describe('cancel and discard', () => {
  it('discards a cancelled attempt: an assistant/attempt, no assistant message, the turn aborted', async () => {
    const { loop, world, events, records, port } = testLoop()
    const reason = await loop.turn(
      {
        kind: 'turn',
        user: 'read a.ts',
        steps: [
          { toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' }, result: 'x' }], cancel: true },
          { text: 'never sent' },
        ],
      },
      world,
    )
    expect(reason).toBe('aborted')
    const attempt = events.find((event) => event.type === 'assistant/attempt')
    expect(attempt?.type === 'assistant/attempt' && attempt.data.error.type).toBe('cancelled')
    expect(events.some((event) => event.type === 'assistant/message' || event.type === 'tool/call')).toBe(
      false,
    )
    expect(events.at(-1)?.data).toEqual({ turn: 1, reason: 'aborted' })
    // The request reached the provider once; its row has no usage.
    expect(port.calls).toHaveLength(1)
    expect(records.map((record) => record.outcome.ok)).toEqual([false])
  })

  it('sends the next turn after the cancelled prompt with nothing of the discarded answer', async () => {
    const { loop, world, port } = testLoop()
    await loop.turn({ kind: 'turn', user: 'first', steps: [{ text: 'discarded', cancel: true }] }, world)
    await loop.turn(say('second'), world)
    const roles = port.calls.at(-1)?.request.messages.map((message) => message.message.role)
    expect(roles).toEqual(['system', 'user', 'user'])
    expect(JSON.stringify(port.calls.at(-1)?.request.messages)).not.toContain('discarded')
  })
})

describe('input that arrives while a step runs (seed 003)', () => {
  const toolStep = (arrivals: Arrival[]): StepScript => ({
    toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' }, result: 'contents' }],
    arrivals,
  })
  const textsOf = (call: LlmCall | undefined) =>
    (call?.request.messages ?? []).flatMap((derived) =>
      derived.message.role === 'user'
        ? derived.message.content.flatMap((block) => (block.type === 'text' ? [block.text] : []))
        : [],
    )

  it('a steer enters the running turn at its next step, after the tool result', async () => {
    const { loop, world, events, port } = testLoop()
    await loop.turn(
      {
        kind: 'turn',
        user: 'read a.ts',
        steps: [toolStep([{ delivery: 'steer', text: 'only the exports' }]), { text: 'done' }],
      },
      world,
    )
    expect(textsOf(port.calls[0])).toEqual(['read a.ts'])
    expect(textsOf(port.calls[1])).toEqual(['read a.ts', 'only the exports'])
    const roles = port.calls[1]?.request.messages.map((derived) => derived.message.role)
    expect(roles?.slice(-2)).toEqual(['tool', 'user'])
    const steer = events.find(
      (event) => event.type === 'user/message' && event.seq > 0 && textOf(event) === 'only the exports',
    )
    const stepTwo = events.find((event) => event.type === 'step/start' && event.data.step === 2)
    expect(steer?.seq).toBeGreaterThan(stepTwo?.seq ?? Number.POSITIVE_INFINITY)
    expect(events.filter((event) => event.type === 'turn/start')).toHaveLength(1)
  })

  it('a followup waits for the turn to end, then opens the next turn at once with its own steps', async () => {
    const { loop, world, events, port, clock } = testLoop()
    await loop.turn(
      {
        kind: 'turn',
        user: 'read a.ts',
        steps: [
          toolStep([{ delivery: 'followup', text: 'then b.ts', steps: [{ text: 'b is empty' }] }]),
          { text: 'done' },
        ],
      },
      world,
    )
    expect(textsOf(port.calls[1])).toEqual(['read a.ts'])
    expect(textsOf(port.calls[2])).toEqual(['read a.ts', 'then b.ts'])
    const turns = events.flatMap((event) => (event.type === 'turn/start' ? [event] : []))
    expect(turns.map((event) => event.data.turn)).toEqual([1, 2])
    const firstEnd = events.find((event) => event.type === 'turn/end')
    expect(turns[1]?.time).toBe(firstEnd?.time)
    expect(clock.now()).toBe(events.at(-1)?.time)
  })

  it('an injection joins the next request silently: no turn of its own', async () => {
    const { loop, world, events, port } = testLoop()
    await loop.turn(
      {
        kind: 'turn',
        user: 'read a.ts',
        steps: [toolStep([{ delivery: 'inject', text: 'branch: main', plugin: 'git' }]), { text: 'done' }],
      },
      world,
    )
    expect(textsOf(port.calls[1])).toEqual(['read a.ts', 'branch: main'])
    const injected = events.find(
      (event) => event.type === 'user/message' && event.data.source.kind === 'plugin',
    )
    expect(injected?.type === 'user/message' && injected.data.source).toEqual({
      kind: 'plugin',
      plugin: 'git',
    })
    expect(events.filter((event) => event.type === 'turn/start')).toHaveLength(1)
  })

  it('a steer on the last step of a turn is claimed by the next step the loop takes', async () => {
    const { loop, world, port } = testLoop()
    await loop.turn(
      {
        kind: 'turn',
        user: 'hello',
        steps: [{ text: 'hi', arrivals: [{ delivery: 'steer', text: 'be brief' }] }],
      },
      world,
    )
    await loop.turn(say('next'), world)
    expect(textsOf(port.calls[1])).toEqual(['hello', 'be brief', 'next'])
  })
})

function textOf(event: SessionEvent): string | undefined {
  if (event.type !== 'user/message') return undefined
  const block = event.data.message.content[0]
  return block?.type === 'text' ? block.text : undefined
}

describe('pressure prune (seed 004)', () => {
  const big = 'y'.repeat(2000)
  const readBig = {
    kind: 'turn' as const,
    user: 'read the schema',
    steps: [
      { toolCalls: [{ name: 'read_file', arguments: { path: 'schema.ts' }, result: big }] },
      { text: 'read' },
    ],
  }

  it('prunes inside a turn, at the pre-step after the call that crossed the threshold', async () => {
    const { loop, world, events, port } = testLoop()
    await loop.turn(readBig, world)
    // The next turn's first request is the first to carry the result and a long paste: it crosses.
    world.pressurePrune = { contextTokens: 1000, thresholdChars: 1000, keepChars: 100, skipLastNodes: 3 }
    expect(port.calls.at(-1)?.request.messages.length).toBeGreaterThan(0)
    await loop.turn(withTool('x'.repeat(2000), 'short'), world)
    const prune = events.find((event) => event.type === 'compaction/prune')
    const stepStarts = events.flatMap((event) => (event.type === 'step/start' ? [event] : []))
    const following = stepStarts.find((event) => event.seq > (prune?.seq ?? Number.POSITIVE_INFINITY))
    expect(following?.data).toEqual({ turn: 2, step: 2 })
    // Step 1 of turn 2 still carried the whole result; step 2 carries the cut one and starts a series.
    expect(JSON.stringify(port.calls.at(-2)?.request.messages)).toContain(big)
    expect(JSON.stringify(port.calls.at(-1)?.request.messages)).not.toContain(big)
    expect(events.filter((event) => event.type === 'request/header').at(-1)?.data).toMatchObject({
      reason: 'series',
    })
  })

  it('does not prune while the measured context stays under the threshold', async () => {
    const { loop, world, events } = testLoop()
    world.pressurePrune = { contextTokens: 100_000, thresholdChars: 1000, keepChars: 100, skipLastNodes: 0 }
    await loop.turn(readBig, world)
    await loop.turn(withTool('more'), world)
    expect(events.some((event) => event.type === 'compaction/start')).toBe(false)
  })
})
