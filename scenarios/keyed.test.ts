import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROVIDER_IDS } from '../harness/types.ts'
import { findModel, resolveModel } from '../providers/catalog.ts'
import { type LoopbackServer, startLoopback } from '../providers/mock/loopback.ts'
import { describeMismatch, EXACT_TOLERANCE, fidelityVerdict, LIVE_TOLERANCE } from '../reports/fidelity.ts'
import { inapplicable, keyedCases, keyedTolerance, perturbedCatalog, runKeyed } from './keyed.ts'

const PLACEHOLDER_KEY = 'cachelab-keyed-test-placeholder'
/** `{"type":"function","function":{"name":"read_file","description":"` and the like: before any namespace. */
const SHARED_FRAMING_TOKENS = 16

/** What the keyed suite's live runs see: every base URL at the server, placeholder keys. */
function loopbackEnv(server: LoopbackServer): Record<string, string> {
  return {
    ANTHROPIC_API_KEY: PLACEHOLDER_KEY,
    OPENAI_API_KEY: PLACEHOLDER_KEY,
    DEEPSEEK_API_KEY: PLACEHOLDER_KEY,
    GEMINI_API_KEY: PLACEHOLDER_KEY,
    AWS_BEARER_TOKEN_BEDROCK: PLACEHOLDER_KEY,
    ANTHROPIC_BASE_URL: server.baseURLs.anthropic,
    OPENAI_BASE_URL: server.baseURLs.openai,
    DEEPSEEK_BASE_URL: server.baseURLs.deepseek,
    GEMINI_BASE_URL: server.baseURLs.gemini,
    BEDROCK_BASE_URL: server.baseURLs.bedrock,
  }
}

describe('keyed cases', () => {
  const sonnet = resolveModel('anthropic', 'claude-sonnet-4-6')
  const opus = resolveModel('anthropic', 'claude-opus-4-8')

  it('give every provider, scenario and variant a namespace of its own that opens each of its system prompts', () => {
    const namespaces = PROVIDER_IDS.flatMap((provider) =>
      keyedCases(provider, resolveModel(provider), 'salt-1').map((keyed) => keyed.namespace),
    )
    expect(new Set(namespaces).size).toBe(namespaces.length)
    for (const keyed of keyedCases('anthropic', opus, 'salt-1')) {
      const opening = `${keyed.opening}\n\n`
      expect(keyed.opening).toContain(keyed.namespace)
      expect(keyed.scenario.tools[0]?.description.slice(0, opening.length)).toBe(opening)
      const texts = [keyed.scenario.system]
      for (const action of keyed.scenario.script) if (action.kind === 'set-system') texts.push(action.text)
      expect(texts.length).toBeGreaterThan(0)
      for (const text of texts)
        expect(typeof text === 'string' && text.slice(0, opening.length)).toBe(opening)
      expect(keyed.scenario.variants).toEqual([keyed.variant])
    }
  })

  it('keep one run apart from another by the salt', () => {
    const first = keyedCases('deepseek', resolveModel('deepseek'), 'run-1')
    const second = keyedCases('deepseek', resolveModel('deepseek'), 'run-2')
    expect(first.map((keyed) => keyed.scenario.system)).not.toContain(second[0]?.scenario.system)
  })

  it('skip the in-history prompt change on a model whose route is unsupported, saying why', () => {
    const skipped = keyedCases('anthropic', sonnet, 'salt').filter((keyed) => keyed.skip !== undefined)
    expect(skipped.map((keyed) => `${keyed.scenario.name}.${keyed.variant.name}`)).toEqual([
      'prompt-change.in-history',
    ])
    expect(skipped[0]?.skip).toBe(
      'claude-sonnet-4-6 has no in-history system-prompt route (catalog route: unsupported)',
    )
  })

  it('run every variant on a model with the in-history route', () => {
    expect(keyedCases('anthropic', opus, 'salt').filter((keyed) => keyed.skip !== undefined)).toEqual([])
    expect(inapplicable({ name: 'in-history', policies: { route: 'in-history' } }, opus)).toBeUndefined()
  })
})

describe('keyed tolerance', () => {
  it('defaults to the live tolerance and reads each part from the environment', () => {
    expect(keyedTolerance({})).toEqual(LIVE_TOLERANCE)
    expect(
      keyedTolerance({ CACHELAB_KEYED_TOLERANCE_TOKENS: '0', CACHELAB_KEYED_TOLERANCE_RATIO: '0' }),
    ).toEqual(EXACT_TOLERANCE)
    expect(keyedTolerance({ CACHELAB_KEYED_TOLERANCE_RATIO: '0.2' })).toEqual({ tokens: 256, ratio: 0.2 })
  })

  it('refuses a value that is not a number in range, naming the variable', () => {
    expect(() => keyedTolerance({ CACHELAB_KEYED_TOLERANCE_TOKENS: 'lots' })).toThrow(
      /CACHELAB_KEYED_TOLERANCE_TOKENS must be a number/,
    )
    expect(() => keyedTolerance({ CACHELAB_KEYED_TOLERANCE_RATIO: '1.5' })).toThrow(
      /CACHELAB_KEYED_TOLERANCE_RATIO must be a number from 0 to 1/,
    )
  })
})

describe('the keyed suite against `cachelab serve` on loopback', () => {
  let faithful: LoopbackServer
  let perturbed: LoopbackServer
  beforeAll(async () => {
    faithful = await startLoopback({ upstream: 'sim', port: 0 })
    perturbed = await startLoopback({ upstream: 'sim', port: 0, simulator: { models: perturbedCatalog() } })
  })
  afterAll(async () => {
    await faithful?.close()
    await perturbed?.close()
  })

  it('matches every prediction exactly when the server follows the catalog, each session cold at its start', async () => {
    for (const provider of PROVIDER_IDS) {
      const run = await runKeyed(provider, { env: loopbackEnv(faithful), salt: 'faithful' })
      expect(run.fidelity.length, provider).toBeGreaterThan(20)
      expect(fidelityVerdict(run.fidelity, EXACT_TOLERANCE).map(describeMismatch)).toEqual([])
      // The namespaces at work: no session's first request reads what an earlier session wrote, but for
      // the unit DeepSeek persists at the wire framing every first tool shares.
      const shared = provider === 'deepseek' ? SHARED_FRAMING_TOKENS : 0
      for (const [name, rows] of run.sessions) {
        expect(rows[0]?.cacheReadTokens, `${provider} ${name}`).toBeLessThanOrEqual(shared)
        // A live run's rows carry the prediction beside the provider's usage; here they agree.
        for (const row of rows.filter((candidate) => candidate.ok))
          expect(row.predictedCacheReadTokens, `${provider} ${name}`).toBe(row.cacheReadTokens)
      }
    }
  })

  it("reads an earlier run's cache on the cold requests of a run with the same salt", async () => {
    await runKeyed('deepseek', { env: loopbackEnv(faithful), salt: 'repeated' })
    const again = await runKeyed('deepseek', { env: loopbackEnv(faithful), salt: 'repeated' })
    for (const [name, rows] of again.sessions)
      expect(rows[0]?.cacheReadTokens, name).toBeGreaterThan(SHARED_FRAMING_TOKENS)
  })

  it('fails on every provider, even within the live tolerance, when the server caches by other rules', async () => {
    for (const provider of PROVIDER_IDS) {
      const run = await runKeyed(provider, { env: loopbackEnv(perturbed), salt: 'perturbed' })
      expect(fidelityVerdict(run.fidelity, EXACT_TOLERANCE).length, provider).toBeGreaterThan(0)
      expect(fidelityVerdict(run.fidelity, LIVE_TOLERANCE).length, provider).toBeGreaterThan(0)
    }
  })

  it('names provider, scenario.variant, turn.step and observed against predicted in a failure', async () => {
    const run = await runKeyed('anthropic', { env: loopbackEnv(perturbed), salt: 'named' })
    const [first] = fidelityVerdict(run.fidelity, EXACT_TOLERANCE)
    const cold = run.fidelity[0]?.predicted?.write
    expect(cold).toBeGreaterThan(2048)
    // Below the server's 4,096-token minimum nothing is written where the catalog's 1,024 writes the prompt.
    expect(first && describeMismatch(first)).toBe(
      `anthropic append-only.default turn.step 1.1: write observed 0, predicted ${cold}, tolerance ±0`,
    )
    expect(findModel('anthropic', run.entry.model)?.cache).toMatchObject({ minTokens: 1024 })
  })
})
