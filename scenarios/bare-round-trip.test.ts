import { describe, expect, it } from 'vitest'
import type { LlmCall } from '../harness/ports.ts'
import { BareRoundTrip } from './bare-round-trip.ts'
import { replayLongSession } from './long-session-replay.ts'

/** The first and the last call of a short long-session replay on `provider` (its indexes count from 1). */
async function calls(provider: 'openai-chat' | 'anthropic'): Promise<[LlmCall, LlmCall]> {
  const kept: LlmCall[] = []
  await replayLongSession(4, provider, (index, record) => {
    kept[index] = record.call
  })
  return [kept[1] as LlmCall, kept.at(-1) as LlmCall]
}

describe('BareRoundTrip', () => {
  for (const provider of ['openai-chat', 'anthropic'] as const)
    it(`answers every ${provider} body with the reply recorded from the mock, not a simulation of it`, async () => {
      const [early, late] = await calls(provider)
      const bare = BareRoundTrip.start()
      try {
        await bare.prime(provider, early)
        expect(bare.primed(provider)).toBe(true)
        const first = await bare.send(provider, bare.build(provider, early))
        const later = await bare.send(provider, bare.build(provider, late))
        // The mock would count the later, longer body's tokens; the bare handler answers what it recorded.
        expect(first.usage.input).toBeGreaterThan(0)
        expect(later.usage).toEqual(first.usage)
        expect(later.message).toEqual(first.message)
      } finally {
        bare.close()
      }
    })

  it('refuses to send for a provider it was not primed for', async () => {
    const [early] = await calls('openai-chat')
    const bare = BareRoundTrip.start()
    try {
      await expect(bare.send('anthropic', bare.build('openai-chat', early))).rejects.toThrow(
        'the bare round trip is not primed for anthropic',
      )
    } finally {
      bare.close()
    }
  })
})
