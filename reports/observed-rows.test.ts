import { describe, expect, it } from 'vitest'
import type { ObservedRequest, TranscriptEvent } from './observed/transcripts/types.ts'
import {
  costWithHourTtl,
  importedModel,
  type ObservedRow,
  ObservedRowBuilder,
  rewritesTable,
} from './observed-rows.ts'

const START = Date.parse('2026-11-01T10:00:00Z')

/** An Anthropic request at `minute` reading `read` and writing `write` (5m, or 1h with `hour`). */
function claude(
  minute: number,
  read: number,
  write: number,
  options: { hour?: boolean; events?: TranscriptEvent[]; parent?: string; model?: string } = {},
): ObservedRequest {
  const uncached = 10
  return {
    format: 'claude-code',
    source: `session.jsonl:${minute}`,
    session: 's',
    ...(options.parent !== undefined ? { parent: options.parent } : {}),
    provider: 'anthropic',
    model: options.model ?? 'claude-sonnet-4-6',
    time: new Date(START + minute * 60_000).toISOString(),
    usage: {
      input: read + write + uncached,
      uncached,
      cacheRead: read,
      cacheWrite: write,
      cacheWrite5m: options.hour === true ? 0 : write,
      cacheWrite1h: options.hour === true ? write : 0,
      output: 50,
      raw: {},
    },
    events: options.events ?? [],
  }
}

function rows(requests: ObservedRequest[]): ObservedRow[] {
  const builder = new ObservedRowBuilder({ runId: 'import-test' })
  return requests.map((request) => builder.add(request))
}

describe('classifying the cache rewrites of a recorded session', () => {
  it('counts an append-only session as a start and growth, with no break', () => {
    const classified = rows([claude(0, 0, 5000), claude(1, 5000, 300), claude(2, 5300, 300)])
    expect(classified.map(({ rewrite }) => rewrite.class)).toEqual(['session-start', 'growth', 'growth'])
    expect(classified.map(({ row }) => row.breakCause)).toEqual([undefined, undefined, undefined])
  })

  it('calls a rewrite after a gap past the 5-minute lifetime an expiry, on the provider side', () => {
    const [, expired] = rows([claude(0, 0, 5000), claude(6, 0, 5300)])
    expect(expired?.rewrite).toMatchObject({ class: 'ttl-expired', missedTokens: 5000, gapSeconds: 360 })
    expect(expired?.row).toMatchObject({
      breakCause: 'ttl-expired',
      providerCause: 'ttl-expired',
      lostTokens: 0,
      providerLostTokens: 5000,
    })
  })

  it('keeps a 1-hour prefix through the same gap: a rewrite there is not an expiry', () => {
    const [, , rewritten] = rows([
      claude(0, 0, 5000, { hour: true }),
      claude(1, 5000, 300, { hour: true }),
      claude(7, 0, 5600, { hour: true }),
    ])
    expect(rewritten?.rewrite.class).toBe('unexplained')
    expect(rewritten?.row).toMatchObject({
      breakCause: 'unexplained',
      lostTokens: 5300,
      providerLostTokens: 0,
    })
    const [, late] = rows([claude(0, 0, 5000, { hour: true }), claude(61, 0, 5300, { hour: true })])
    expect(late?.rewrite.class).toBe('ttl-expired')
  })

  it('names the event the transcript shows before a rewrite', () => {
    // An agent's compaction is its history summarized, as a capture of it says; a loop's log names its own.
    const compacted = rows([claude(0, 0, 5000), claude(1, 0, 2000, { events: [{ kind: 'compaction' }] })])
    expect(compacted[1]?.row).toMatchObject({ breakCause: 'history-summarized' })
    expect(compacted[1]?.rewrite.class).toBe('compaction')
    const logged = rows([
      claude(0, 0, 5000),
      claude(1, 0, 2000, { events: [{ kind: 'compaction', cause: 'compaction-summary' }] }),
    ])
    expect(logged[1]?.row).toMatchObject({ breakCause: 'compaction-summary' })
    const switched = rows([
      claude(0, 0, 5000),
      claude(1, 0, 5300, {
        model: 'claude-opus-4-8',
        events: [{ kind: 'model-switch', from: 'claude-sonnet-4-6', to: 'claude-opus-4-8' }],
      }),
    ])
    expect(switched[1]?.row).toMatchObject({ breakCause: 'config-changed', breakNode: 'model' })
    expect(switched[1]?.rewrite.class).toBe('model-switch')
  })

  it('names a message the agent rebuilt where the transcript says, as a capture names it', () => {
    const [, edited] = rows([
      claude(0, 0, 5000),
      claude(1, 0, 5300, {
        events: [
          { kind: 'resume', detail: 'chat resumed' },
          { kind: 'message-edit', node: 'messages[0].0', detail: 'rebuilt on resume' },
        ],
      }),
    ])
    expect(edited?.row).toMatchObject({
      breakCause: 'message-edited',
      breakNode: 'messages[0].0',
      lostTokens: 5000,
    })
    expect(edited?.rewrite.class).toBe('message-edit')
  })

  it('names a switch back to a model whose cache still held most of the history, however little it cost', () => {
    const [, , back] = rows([
      claude(0, 0, 5000),
      claude(1, 5000, 200),
      claude(2, 4900, 505, {
        model: 'claude-opus-4-8',
        events: [{ kind: 'model-switch', from: 'claude-sonnet-4-6', to: 'claude-opus-4-8' }],
      }),
    ])
    expect(back?.row).toMatchObject({ breakCause: 'config-changed', breakNode: 'model', lostTokens: 300 })
    expect(back?.rewrite.class).toBe('model-switch')
  })

  it('does not call a shortfall of a few tokens a rewrite', () => {
    const [, , small] = rows([claude(0, 0, 5000), claude(1, 5000, 300), claude(2, 5250, 360)])
    expect(small?.rewrite.class).toBe('growth')
    expect(small?.row.breakCause).toBeUndefined()
  })

  it('starts a sidechain as its own class, whatever it wrote', () => {
    const [first] = rows([claude(0, 0, 4000, { parent: 'main' })])
    expect(first?.rewrite).toMatchObject({ class: 'sidechain-start', writeTokens: 4000 })
  })

  it('reads an OpenAI automatic cache as the previous input on the 128-token grid', () => {
    const codex = (minute: number, input: number, cached: number): ObservedRequest => ({
      format: 'codex',
      source: `rollout.jsonl:${minute}`,
      session: 'c',
      provider: 'openai-responses',
      model: 'gpt-5.4',
      time: new Date(START + minute * 60_000).toISOString(),
      usage: { input, uncached: input - cached, cacheRead: cached, cacheWrite: 0, output: 20, raw: {} },
      events: [],
    })
    const [, kept, missed] = rows([codex(0, 10_000, 0), codex(1, 12_000, 9984), codex(2, 14_000, 0)])
    expect(kept?.rewrite.class).toBe('growth')
    expect(missed?.rewrite).toMatchObject({ class: 'unexplained', missedTokens: 11_904 })
  })
})

describe('the rewrites table and the 1-hour counterfactual', () => {
  const session = rows([claude(0, 0, 5000), claude(1, 5000, 300), claude(8, 0, 5600), claude(9, 5600, 300)])

  it('splits every write token into classes whose shares sum to one', () => {
    const table = rewritesTable(session)
    expect(table.map((entry) => entry.class)).toEqual(['ttl-expired', 'session-start', 'growth'])
    expect(table.reduce((sum, entry) => sum + entry.writeShare, 0)).toBeCloseTo(1, 12)
    expect(table[0]).toMatchObject({ requests: 1, writeTokens: 5600, missedTokens: 5300 })
  })

  it('prices a 1-hour lifetime: dearer writes, but the expired prefix read instead', () => {
    const actual = session.reduce((sum, { row }) => sum + row.costUsd, 0)
    const hour = costWithHourTtl(session)
    // 5,300 tokens read at $0.30 instead of written at $3.75, the other writes at $6 instead of $3.75.
    const expected = actual + (-5300 * (3.75 - 0.3) + (5000 + 300 + 300 + 300) * (6 - 3.75)) / 1_000_000
    expect(hour).toBeCloseTo(expected, 10)
  })
})

describe('recorded model names', () => {
  it('resolves a dated snapshot the provider documents as a model to that model, priced as itself', () => {
    expect(importedModel('anthropic', 'claude-sonnet-4-6').mappedFrom).toBeUndefined()
    const opus41 = importedModel('anthropic', 'claude-opus-4-1-20250805')
    expect(opus41.mappedFrom).toBeUndefined()
    expect(opus41.entry).toMatchObject({ model: 'claude-opus-4-1', prices: { input: 15, output: 75 } })
    expect(importedModel('anthropic', 'claude-opus-4-5-20251101')).toEqual({
      entry: expect.objectContaining({ model: 'claude-opus-4-5' }),
    })
    expect(importedModel('openai', 'gpt-5-codex').mappedFrom).toBeUndefined()
  })

  it('maps a name the catalog lacks to the nearest catalog model and says so', () => {
    expect(importedModel('anthropic', 'claude-opus-4-9-20270101')).toMatchObject({
      entry: { model: 'claude-opus-4-8' },
      mappedFrom: 'claude-opus-4-9-20270101',
    })
    expect(importedModel('deepseek', 'deepseek-v4-flashier')).toMatchObject({
      entry: { model: 'deepseek-flash' },
      mappedFrom: 'deepseek-v4-flashier',
    })
  })

  it("takes the API's own id of a model the catalog names otherwise as that model, not a stand-in", () => {
    const imported = importedModel('deepseek', 'deepseek-v4-flash')
    expect(imported.entry.model).toBe('deepseek-flash')
    expect(imported.mappedFrom).toBeUndefined()
  })
})
