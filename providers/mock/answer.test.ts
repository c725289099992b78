import { describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { TokenCounter } from '../sim/tokens.ts'
import { type AnswerOptions, DEFAULT_REASONING_TOKENS, renderAnswer } from './answer.ts'
import type { Reply } from './reply.ts'

const counter = new TokenCounter()
let calls = 0
const options = (more: Partial<AnswerOptions> = {}): AnswerOptions => ({
  reasons: false,
  counter,
  seed: 'answer-test',
  callId: () => {
    calls += 1
    return `call_${calls}`
  },
  ...more,
})

const text = (words: number): Reply['blocks'][number] => ({ type: 'text', text: fillerText(words, 'answer') })
const reply = (blocks: Reply['blocks'], reasoning: Reply['reasoning'] = { kind: 'none' }): Reply => ({
  blocks,
  reasoning,
  source: 'replies',
})

describe('an answer under no cap', () => {
  it('keeps a header-scripted message as it is, billing what the message itself counts', () => {
    const answer = renderAnswer(
      { blocks: [{ type: 'text', text: 'OK.' }], reasoning: { kind: 'none' }, source: 'header' },
      options({ reasons: true }),
    )
    expect(answer).toEqual({
      message: { role: 'assistant', content: [{ type: 'text', text: 'OK.' }] },
      stop: 'end',
      source: 'header',
    })
  })

  it('reasons a default amount where the request turns reasoning on, within the thinking budget', () => {
    expect(
      renderAnswer(reply([text(5)], { kind: 'default' }), options({ reasons: true })).reasoning?.tokens,
    ).toBe(DEFAULT_REASONING_TOKENS)
    expect(
      renderAnswer(reply([text(5)], { kind: 'default' }), options({ reasons: true, budget: 10 })).reasoning
        ?.tokens,
    ).toBe(10)
    expect(renderAnswer(reply([text(5)], { kind: 'default' }), options()).reasoning).toBeUndefined()
  })

  it('bills reasoning as output, and names tool calls, stopping for tool use', () => {
    const answer = renderAnswer(
      reply([text(5), { type: 'tool-call', name: 'grep', arguments: '{}' }], {
        kind: 'scripted',
        text: fillerText(20, 'r'),
        redacted: false,
      }),
      options(),
    )
    expect(answer.stop).toBe('tool-use')
    expect(answer.reasoning?.tokens).toBe(20)
    expect(answer.message.content[1]).toMatchObject({
      type: 'tool-call',
      callId: expect.stringMatching(/^call_/),
    })
    expect(answer.outputTokens).toBeGreaterThan(25)
  })
})

describe('the calls of an answer', () => {
  it('keep the namespace of each call of a namespaced tool, by its call id', () => {
    const answer = renderAnswer(
      reply([
        { type: 'tool-call', name: 'spawn_agent', namespace: 'collaboration', arguments: '{}' },
        { type: 'tool-call', name: 'exec_command', arguments: '{}' },
      ]),
      options(),
    )
    const [spawn, exec] = answer.message.content
    if (spawn?.type !== 'tool-call' || exec?.type !== 'tool-call') throw new Error('no calls')
    expect(answer.callNamespaces).toEqual({ [spawn.callId]: 'collaboration' })
    expect(renderAnswer(reply([{ type: 'text', text: 'OK.' }]), options()).callNamespaces).toBeUndefined()
  })
})

describe('an answer over the output cap', () => {
  it('is cut to the cap, reasoning first, and stops for max tokens with the cap as its output', () => {
    const answer = renderAnswer(
      reply([text(50)], { kind: 'scripted', text: fillerText(20, 'r'), redacted: false }),
      options({ cap: 30 }),
    )
    expect(answer.stop).toBe('max-tokens')
    expect(answer.outputTokens).toBe(30)
    expect(answer.reasoning?.tokens).toBe(20)
    const kept = answer.message.content[0]
    expect(kept?.type === 'text' ? counter.count(kept.text) : 0).toBeLessThanOrEqual(10)
  })

  it('spends a cap smaller than the reasoning on reasoning alone', () => {
    const answer = renderAnswer(
      reply([text(5)], { kind: 'scripted', text: fillerText(40, 'r'), redacted: false }),
      options({ cap: 16 }),
    )
    expect(answer).toMatchObject({ stop: 'max-tokens', outputTokens: 16, reasoning: { tokens: 16 } })
    expect(answer.message.content).toEqual([])
  })

  it('leaves out a tool call that does not fit whole', () => {
    const call = {
      type: 'tool-call' as const,
      name: 'write_file',
      arguments: JSON.stringify({ body: fillerText(40) }),
    }
    const answer = renderAnswer(reply([text(3), call]), options({ cap: 10 }))
    expect(answer.message.content.map((block) => block.type)).toEqual(['text'])
    expect(answer.stop).toBe('max-tokens')
  })

  it('answers nothing under a cap of 0 (a cache pre-warm)', () => {
    expect(renderAnswer(reply([{ type: 'text', text: 'OK.' }]), options({ cap: 0 }))).toMatchObject({
      message: { content: [] },
      outputTokens: 0,
      stop: 'max-tokens',
    })
  })
})
