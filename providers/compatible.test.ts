import OpenAI from 'openai'
import { afterEach, describe, expect, it } from 'vitest'
import type { CompatibleProviderId, DerivedRequest, ProviderId } from '../harness/types.ts'
import { run } from '../scenarios/matrix.ts'
import { resolveModel } from './catalog.ts'
import { compatibleProviders, findCompatible, knownProviderIds, useCatalog } from './compatible.ts'
import { buildCompatibleRequest, compatibleWireUsage, parseCompatibleUsage } from './compatible-chat.ts'
import { parseCatalogFile } from './compatible-file.ts'
import { startLoopback } from './mock/loopback.ts'
import { loopbackRoutes } from './mock/loopback-routes.ts'
import { simulate } from './simulate.ts'

/** A catalog file with one provider whose numbers differ from every shipped one. */
const ACME = {
  providers: [
    {
      id: 'acme',
      name: 'Acme AI',
      baseURL: 'https://api.acme.example/v1',
      keyVariable: 'ACME_API_KEY',
      baseURLVariable: 'ACME_BASE_URL',
      cache: {
        minimumTokens: 3000,
        granularityTokens: 1000,
        ttlSeconds: 600,
        routing: { header: 'x-acme-conversation' },
        usage: { cacheRead: 'prompt_cache_hit_tokens', cacheMiss: 'prompt_cache_miss_tokens' },
        writes: 'free',
      },
      models: [{ model: 'acme-large', prices: { input: 1, cacheRead: 0.1, output: 4 } }],
    },
  ],
}

const acme = 'acme' as ProviderId

afterEach(() => useCatalog([]))

/** A Chat body whose system prompt is `words` words long, then `turns` user messages. */
function body(model: string, words: number, turns: number): Record<string, unknown> {
  const system = Array.from({ length: words }, (_, index) => `word${index % 97}`).join(' ')
  const messages = [{ role: 'system', content: system }]
  for (let turn = 0; turn < turns; turn += 1) messages.push({ role: 'user', content: `question ${turn}` })
  return { model, messages }
}

describe('the shipped compatible providers', () => {
  it('each name a source for their rules, and their default model is in the catalog', () => {
    for (const provider of compatibleProviders()) {
      expect(provider.sources.length, provider.id).toBeGreaterThan(0)
      expect(resolveModel(provider.id, undefined).model).toBe(provider.defaultModel)
    }
    expect(knownProviderIds()).toEqual(
      expect.arrayContaining(['deepseek', 'xai', 'kimi', 'openrouter', 'mistral', 'qwen', 'glm']),
    )
  })

  it('read Kimi’s cache in 256-token chunks and xAI’s in 128-token blocks', () => {
    for (const [provider, step] of [
      ['kimi', 256],
      ['xai', 128],
    ] as const) {
      const model = findCompatible(provider)?.defaultModel ?? ''
      const outputs = simulate(provider as ProviderId, [
        { body: body(model, 1500, 1) },
        { body: body(model, 1500, 2) },
      ])
      const second = outputs[1]
      if (second === undefined || !('usage' in second)) throw new Error('no usage')
      expect(second.usage.cacheRead ?? 0, provider).toBeGreaterThan(0)
      expect((second.usage.cacheRead ?? 0) % step, provider).toBe(0)
    }
  })

  it('route xAI by the x-grok-conv-id header: a request on another conversation id reads nothing', () => {
    const model = 'grok-4.7'
    const first = { body: body(model, 1500, 1), headers: { 'x-grok-conv-id': 'a' } }
    const same = simulate('xai' as ProviderId, [first, { ...first, body: body(model, 1500, 2) }])
    const shifted = simulate('xai' as ProviderId, [
      first,
      { body: body(model, 1500, 2), headers: { 'x-grok-conv-id': 'b' } },
    ])
    const read = (outputs: typeof same) => {
      const second = outputs[1]
      return second !== undefined && 'usage' in second ? (second.usage.cacheRead ?? 0) : -1
    }
    expect(read(same)).toBeGreaterThan(0)
    expect(read(shifted)).toBe(0)
  })

  it('put the session key where the provider reads it: a header on xAI, a body field on OpenRouter, nowhere on Kimi', () => {
    const derived: DerivedRequest = {
      sessionId: 'session-1',
      config: { provider: 'xai' as ProviderId, model: 'grok-4.7' },
      route: 'unsupported',
      tools: [],
      headerSeq: 0,
      messages: [
        {
          message: { role: 'user', content: [{ type: 'text', text: 'hi' }] },
          sourceSeqs: [1],
          origin: 'surface',
        },
      ],
    }
    const options = { stream: false, promptCacheKey: 'session-1' }
    const provider = (id: string) => findCompatible(id) ?? expect.unreachable(id)
    const xai = buildCompatibleRequest(provider('xai'), derived, options)
    expect(xai.headers).toEqual({ 'x-grok-conv-id': 'session-1' })
    expect(xai.body.prompt_cache_key).toBeUndefined()
    expect(buildCompatibleRequest(provider('openrouter'), derived, options).body.session_id).toBe('session-1')
    const kimi = buildCompatibleRequest(provider('kimi'), derived, options)
    expect(kimi.headers).toBeUndefined()
    expect(Object.keys(kimi.body)).not.toContain('prompt_cache_key')
  })
})

describe('usage by named fields', () => {
  it('writes and reads dotted paths, and buckets stay disjoint', () => {
    const provider = findCompatible('openrouter') ?? expect.unreachable()
    const counts = { input: 2000, read: 1024, write: 0, write5m: 0, write1h: 0, uncached: 976, output: 10 }
    const raw = compatibleWireUsage(provider, counts)
    expect(raw).toMatchObject({
      prompt_tokens: 2000,
      prompt_tokens_details: { cached_tokens: 1024, cache_write_tokens: 0 },
    })
    const usage = parseCompatibleUsage(provider.cache.usage, raw)
    expect(usage.input).toBe((usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0) + usage.uncached)
  })

  it('derives the read from a miss field when the read field is absent', () => {
    const usage = parseCompatibleUsage(
      { cacheRead: 'prompt_cache_hit_tokens', cacheMiss: 'prompt_cache_miss_tokens' },
      { prompt_tokens: 900, prompt_cache_miss_tokens: 100, completion_tokens: 5 },
    )
    expect(usage.cacheRead).toBe(800)
    expect(usage.uncached).toBe(100)
  })
})

describe('a catalog file', () => {
  it('names the file and the field of a bad rule', () => {
    const bad = structuredClone(ACME)
    ;(bad.providers[0] as { cache: { granularityTokens: unknown } }).cache.granularityTokens = 0
    expect(() => parseCatalogFile(JSON.stringify(bad), 'acme.json')).toThrow(
      'acme.json: providers[0].cache.granularityTokens must be a whole number from 1',
    )
    const misspelt = structuredClone(ACME) as unknown as {
      providers: Array<{ cache: Record<string, unknown> }>
    }
    ;(misspelt.providers[0] as { cache: Record<string, unknown> }).cache.minimumTokenz = 1
    expect(() => parseCatalogFile(JSON.stringify(misspelt), 'acme.json')).toThrow(
      'acme.json: providers[0].cache.minimumTokenz is not a field',
    )
  })

  it('refuses a built-in id and billed writes without a write price', () => {
    const builtIn = structuredClone(ACME)
    ;(builtIn.providers[0] as { id: string }).id = 'deepseek'
    expect(() => parseCatalogFile(JSON.stringify(builtIn), 'f.json')).toThrow(
      'providers[0].id deepseek is a built-in provider',
    )
    const billed = structuredClone(ACME)
    ;(billed.providers[0] as { cache: { writes: string } }).cache.writes = 'billed'
    expect(() => parseCatalogFile(JSON.stringify(billed), 'f.json')).toThrow(
      'providers[0].models[0].prices.cacheWrite is needed',
    )
  })

  it('adds a provider that runs append-only with its own minimum and granularity', async () => {
    useCatalog(parseCatalogFile(JSON.stringify(ACME), 'acme.json'))
    expect(knownProviderIds()).toContain('acme')
    const result = await run({ scenarios: ['append-only'], providers: [acme] })
    const rows = result.rows.filter((row) => row.provider === 'acme')
    expect(rows.length).toBeGreaterThan(3)
    const reads = rows.map((row) => row.cacheReadTokens).filter((read) => read > 0)
    expect(reads.length).toBe(rows.length - 1)
    for (const read of reads) {
      expect(read).toBeGreaterThanOrEqual(3000)
      expect((read - 3000) % 1000).toBe(0)
    }
    expect(
      result.claims.filter((claim) => claim.provider === 'acme').every((claim) => claim.status === 'holds'),
    ).toBe(true)
  })
})

describe('cachelab serve', () => {
  it('routes a provider a catalog file adds, and stops when the catalog no longer has it', async () => {
    const before = loopbackRoutes()
    expect(before.some((route) => route.vendor === 'acme')).toBe(false)
    useCatalog(parseCatalogFile(JSON.stringify(ACME), 'acme.json'))
    expect(loopbackRoutes()).toContainEqual({ prefix: '/acme/v1', vendor: 'acme' })
    const server = await startLoopback({ upstream: 'sim', port: 0 })
    try {
      const models = `${server.baseURL(acme as CompatibleProviderId)}/models`
      expect((await fetch(models)).status).toBe(200)
      useCatalog([])
      expect(loopbackRoutes()).toEqual(before)
      expect((await fetch(models)).status).toBe(404)
    } finally {
      await server.close()
    }
  })

  it('answers the official openai SDK under /xai/v1, its cached tokens growing over a conversation', async () => {
    const server = await startLoopback({ upstream: 'sim', port: 0 })
    try {
      const client = new OpenAI({
        baseURL: server.baseURL('xai' as CompatibleProviderId),
        apiKey: 'unused',
        maxRetries: 0,
      })
      const { messages } = body('grok-4.7', 1500, 0) as { messages: OpenAI.Chat.ChatCompletionMessageParam[] }
      const cached: number[] = []
      for (const question of ['one', 'two', 'three']) {
        // Each turn adds more than a 128-token block, so the read grows turn by turn.
        messages.push({ role: 'user', content: `${question}: ${'the log shows another line. '.repeat(60)}` })
        const completion = await client.chat.completions.create(
          { model: 'grok-4.7', messages },
          { headers: { 'x-grok-conv-id': 'conv-1' } },
        )
        cached.push(completion.usage?.prompt_tokens_details?.cached_tokens ?? -1)
        messages.push({ role: 'assistant', content: completion.choices[0]?.message.content ?? '' })
      }
      expect(cached[0]).toBe(0)
      expect(cached[1]).toBeGreaterThan(0)
      expect(cached[2]).toBeGreaterThan(cached[1] ?? 0)
    } finally {
      await server.close()
    }
  })
})
