import { describe, expect, it } from 'vitest'
import { handleChat } from './chat.ts'
import { type MockCall, MockContext } from './context.ts'
import { type Fault, FaultQueue } from './faults.ts'
import { readMockRequest } from './request.ts'

const rateLimit: Fault = { kind: 'rate-limit', retryAfterMs: 1500 }
const overloaded: Fault = { kind: 'overloaded' }
const cut: Fault = { kind: 'stream-cut', afterFrames: 3 }

/** A Chat Completions request as the SDK posts it. */
const post = (body: string) =>
  new Request('https://api.openai.com/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })
const valid = JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hi' }] })

describe('FaultQueue', () => {
  it('hands faults out first in, first out, one per take, then nothing', () => {
    const queue = new FaultQueue()
    queue.push(rateLimit)
    queue.push(overloaded, cut)
    expect(queue.pending).toBe(3)
    expect([queue.take(), queue.take(), queue.take(), queue.take()]).toEqual([
      rateLimit,
      overloaded,
      cut,
      undefined,
    ])
    expect(queue.pending).toBe(0)
  })

  it('hands out the very fault objects it was given, with no matching on kind', () => {
    const queue = new FaultQueue()
    queue.push(cut, rateLimit)
    expect(queue.take()).toBe(cut)
    expect(queue.take()).toBe(rateLimit)
  })

  it('starts empty, and takes nothing from an empty queue', () => {
    const queue = new FaultQueue()
    expect(queue.pending).toBe(0)
    expect(queue.take()).toBeUndefined()
    expect(queue.pending).toBe(0)
  })

  it('shows the next fault on peek without taking it', () => {
    const queue = new FaultQueue()
    expect(queue.peek()).toBeUndefined()
    queue.push(cut, rateLimit)
    expect([queue.peek(), queue.peek()]).toEqual([cut, cut])
    expect(queue.pending).toBe(2)
    expect(queue.take()).toBe(cut)
    expect(queue.peek()).toBe(rateLimit)
  })

  it('drops every pending fault on clear and keeps working after', () => {
    const queue = new FaultQueue()
    queue.push(rateLimit, overloaded)
    queue.clear()
    expect(queue.pending).toBe(0)
    expect(queue.take()).toBeUndefined()
    queue.push(cut)
    expect(queue.take()).toBe(cut)
  })

  it('allows the same fault to be queued twice, for two requests', () => {
    const queue = new FaultQueue()
    queue.push(overloaded, overloaded)
    expect([queue.take(), queue.take(), queue.take()]).toEqual([overloaded, overloaded, undefined])
  })
})

describe('faults in a mock context', () => {
  const statuses = async (bodies: string[], context: MockContext) => {
    const seen: number[] = []
    for (const body of bodies) seen.push((await handleChat('openai', post(body), context)).status)
    return seen
  }

  it('are taken one per accepted request, in the order queued', async () => {
    const context = new MockContext()
    context.faults.push(rateLimit, overloaded)
    expect(await statuses([valid, valid, valid], context)).toEqual([429, 503, 200])
    expect(context.faults.pending).toBe(0)
  })

  it('are never taken while a request is parsed, valid or not', async () => {
    const context = new MockContext()
    context.faults.push(rateLimit)
    expect(await readMockRequest(post('{not json'), context)).toHaveProperty('problem')
    expect(await readMockRequest(post(valid), context)).not.toHaveProperty('fault')
    expect(context.faults.pending).toBe(1)
  })

  it('are left for the next accepted request by requests the handler rejects', async () => {
    const context = new MockContext()
    context.faults.push(rateLimit)
    const empty = JSON.stringify({ model: 'gpt-5.4', messages: [] })
    const modelless = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })
    expect(await statuses(['{not json', empty, modelless, valid, valid], context)).toEqual([
      400, 400, 400, 429, 200,
    ])
  })

  it('fail an accepted request before simulation, as the API refuses it before processing it', async () => {
    const context = new MockContext()
    const calls: MockCall[] = []
    context.observer = (call) => calls.push(call)
    context.faults.push(overloaded)
    expect(await statuses([valid], context)).toEqual([503])
    expect(calls).toEqual([expect.objectContaining({ api: 'openai-chat', status: 503 })])
    expect(calls[0]).not.toHaveProperty('simulation')
  })

  it('inside a stream, are left for the next request by a request the simulator rejects', async () => {
    const context = new MockContext()
    context.faults.push({ kind: 'stream-cut', afterFrames: 1 })
    const streamed = (extra: object) => post(JSON.stringify({ ...JSON.parse(valid), stream: true, ...extra }))
    const refused = await handleChat('openai', streamed({ prompt_cache_retention: 'someday' }), context)
    expect(refused.status).toBe(400)
    expect(context.faults.pending).toBe(1)
    const cut = await handleChat('openai', streamed({}), context)
    expect(cut.status).toBe(200)
    await expect(cut.text()).rejects.toThrow()
    expect(context.faults.pending).toBe(0)
  })

  it('are forgotten when the context is reset, like a fresh account', () => {
    const context = new MockContext()
    context.faults.push(rateLimit, cut)
    context.reset()
    expect(context.faults.pending).toBe(0)
  })
})
