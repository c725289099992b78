import { describe, expect, it } from 'vitest'
import { simulationModel } from '../catalog.ts'
import { cachesOnlyMarked, withCacheMark } from './cache-marks.ts'

describe("a request's cache marks", () => {
  it('are needed on Anthropic and Bedrock only: the others cache a prefix unasked', () => {
    expect(cachesOnlyMarked(simulationModel('anthropic', 'claude-sonnet-4-6').cache)).toBe(true)
    expect(cachesOnlyMarked(simulationModel('openai', 'gpt-5.4').cache)).toBe(false)
    expect(cachesOnlyMarked(simulationModel('deepseek', 'deepseek-chat').cache)).toBe(false)
  })

  it("added as a client that asks for caching adds them, the client's body left as it was", () => {
    const messages = [{ role: 'user', content: [{ text: 'frost at EDDB?' }] }]
    const converse = { messages }
    expect(withCacheMark('bedrock-converse', converse)).toEqual({
      messages: [
        { role: 'user', content: [{ text: 'frost at EDDB?' }, { cachePoint: { type: 'default' } }] },
      ],
    })
    expect(converse.messages[0]?.content).toHaveLength(1)
    const anthropic = { model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'frost?' }] }
    expect(withCacheMark('anthropic-messages', anthropic)).toEqual({
      ...anthropic,
      cache_control: { type: 'ephemeral' },
    })
    expect(anthropic).not.toHaveProperty('cache_control')
    // No mark fits a request with no message list, nor a wire without marks.
    expect(withCacheMark('bedrock-converse', {})).toBeUndefined()
    expect(withCacheMark('openai-chat', { messages: [] })).toBeUndefined()
  })
})
