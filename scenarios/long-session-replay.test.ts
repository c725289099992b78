import { afterEach, describe, expect, it } from 'vitest'
import { readLineage } from '../harness/lineage.ts'
import { PROVIDER_IDS } from '../harness/types.ts'
import { replayLongSession } from './long-session-replay.ts'

afterEach(() => readLineage(true))

describe('the long session replayed', () => {
  it.each(PROVIDER_IDS)(
    'gives %s the same rows whether the pipeline reads its lists’ claims or compares them whole',
    async (provider) => {
      readLineage(false)
      const compared = await replayLongSession(120, provider)
      readLineage(true)
      const claimed = await replayLongSession(120, provider)
      expect(claimed.length).toBe(240)
      expect(claimed).toEqual(compared)
    },
  )

  const marked = (['anthropic', 'bedrock'] as const).flatMap((provider) =>
    (['rolling', 'last-message', 'system-and-last'] as const).map((breakpoints) => ({
      provider,
      breakpoints,
    })),
  )
  it.each(marked)(
    'gives $provider the same rows under $breakpoints markers, claims read or not',
    async ({ provider, breakpoints }) => {
      const replay = () => replayLongSession(60, provider, undefined, { breakpoints })
      readLineage(false)
      const compared = await replay()
      readLineage(true)
      expect(await replay()).toEqual(compared)
    },
  )
})
