// The keyed request-cache scenarios: small versions of append-only, prompt-change and
// series-start-unchanged, sized just above a model's cache minimum so a real run costs cents. Every
// (provider, scenario, variant) runs in a cache namespace of its own, and a variant the model cannot run
// is a skip that says why.

import { VirtualClock } from '../harness/clock.ts'
import { CachelabError } from '../harness/errors.ts'
import { hashString } from '../harness/random.ts'
import type { ProviderId } from '../harness/types.ts'
import { CATALOG, type ModelEntry } from '../providers/catalog.ts'
import { resolveModel } from '../providers/index.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import {
  type FidelityRow,
  type FidelityTolerance,
  fidelityRows,
  LIVE_TOLERANCE,
} from '../reports/fidelity.ts'
import type { StepRow } from '../reports/types.ts'
import { agentSystemPrompt, CODING_TOOLS, codingTurns } from './fixtures.ts'
import { runSession } from './run.ts'
import type { Scenario, Variant } from './types.ts'

/** The keyed scenarios, in the order they run. */
export const KEYED_SCENARIO_NAMES = ['append-only', 'prompt-change', 'series-start-unchanged'] as const

export type KeyedScenarioName = (typeof KEYED_SCENARIO_NAMES)[number]

/** One keyed session, or the reason it cannot run. */
export interface KeyedCase {
  /** The scenario with the one variant this case runs, its prompts opened by `opening`. */
  scenario: Scenario
  variant: Variant
  /** `<salt>/<provider>/<scenario>.<variant>`. */
  namespace: string
  /**
   * `<hash of the namespace> cache namespace <namespace>`: opens the first tool's description (tools
   * lead the prompt on every provider) and every system prompt of the session.
   */
  opening: string
  /** Set when the model cannot run the variant; the case is then reported as skipped with this reason. */
  skip?: string
}

/** The smallest prompt a model caches (and at least Anthropic's disputed 2,048 for Sonnet 4.6). */
export function cacheMinimum(entry: ModelEntry): number {
  switch (entry.cache.kind) {
    case 'anthropic':
    case 'bedrock':
    case 'openai-prefix':
    case 'openai-breakpoint':
    case 'gemini':
      return entry.cache.minTokens
    case 'deepseek':
      return entry.cache.legacyUnitTokens
  }
}

/** The variants a keyed scenario compares on a model (whether or not the model can run them). */
export function keyedVariants(name: KeyedScenarioName, entry: ModelEntry): Variant[] {
  switch (name) {
    case 'append-only':
      return [{ name: 'default' }]
    case 'prompt-change':
      return [
        { name: 'in-history', policies: { route: 'in-history' } },
        { name: 'unsupported', policies: { route: 'unsupported' } },
      ]
    case 'series-start-unchanged':
      return [
        { name: 'consolidate', policies: { route: entry.route, seriesStart: 'consolidate' } },
        { name: 'keep-live', policies: { route: entry.route, seriesStart: 'keep-live' } },
      ]
  }
}

/**
 * Why a variant cannot run on a model, or undefined when it can. A model whose catalog route is
 * `unsupported` refuses a system message in history, so an `in-history` variant is not sent to it.
 */
export function inapplicable(variant: Variant, entry: ModelEntry): string | undefined {
  if (variant.policies?.route === 'in-history' && entry.route !== 'in-history')
    return `${entry.model} has no in-history system-prompt route (catalog route: ${entry.route})`
  return undefined
}

/**
 * Every keyed case of a provider's model, skipped ones included. `salt` keeps one run's prompts apart
 * from another's; the opening keeps each session's prompts apart from every other session's, so no
 * variant reads what another wrote (Anthropic and DeepSeek share one cache per account, and the two
 * OpenAI APIs share one organization's cache).
 */
export function keyedCases(provider: ProviderId, entry: ModelEntry, salt: string): KeyedCase[] {
  return KEYED_SCENARIO_NAMES.flatMap((name) =>
    keyedVariants(name, entry).map((variant) => {
      const namespace = `${salt}/${provider}/${name}.${variant.name}`
      // The hash comes first: two namespaces differ from their first characters, not after a shared stem.
      const opening = `${hashString(namespace).toString(16).padStart(8, '0')} cache namespace ${namespace}`
      const skip = inapplicable(variant, entry)
      return {
        scenario: keyedScenario(name, entry, salt, opening, variant),
        variant,
        namespace,
        opening,
        ...(skip !== undefined ? { skip } : {}),
      }
    }),
  )
}

function keyedScenario(
  name: KeyedScenarioName,
  entry: ModelEntry,
  salt: string,
  opening: string,
  variant: Variant,
): Scenario {
  const size = Math.max(2048, cacheMinimum(entry)) + 512
  const seed = `keyed:${entry.vendor}:${salt}`
  const base = {
    name,
    tools: CODING_TOOLS.map((tool, index) =>
      index === 0 ? { ...tool, description: `${opening}\n\n${tool.description}` } : tool,
    ),
    maxTokens: 32,
    pace: { turnGapSeconds: 0, toolSeconds: 0 },
    variants: [variant],
    // The keyed suite asserts its claims itself, against the real provider.
    claims: [],
  }
  const turns = (count: number, from = 0) => codingTurns(count, { seed, resultTokens: 120, from })
  // With the first tool's description, two sessions share no more than the wire framing before it
  // (DeepSeek persists even that as a unit). The system prompt opens the same way so the namespace
  // holds where tools are not the prompt's start, and a reader of the log sees it first.
  const system = `${opening}\n\n${agentSystemPrompt(size, `${seed}:${name}`)}`
  switch (name) {
    case 'append-only':
      return {
        ...base,
        demonstrates: 'Every request after the warm-up reads the cached prefix.',
        system,
        script: turns(3),
      }
    case 'prompt-change':
      return {
        ...base,
        demonstrates: 'Appending a changed prompt reads more than rewriting message 0.',
        system,
        script: [...turns(2), { kind: 'set-system', text: `${system}\n\nBuild mode is on.` }, ...turns(1, 2)],
      }
    case 'series-start-unchanged':
      return {
        ...base,
        demonstrates: 'Keeping the live prompt node at a new series reads more than consolidating it.',
        system,
        script: [
          ...turns(1),
          { kind: 'set-system', text: `${system}\n\nBuild update: fixes only.` },
          {
            kind: 'turn',
            user: 'Read the long generated file.',
            steps: [
              {
                toolCalls: [
                  {
                    name: 'read_file',
                    arguments: { path: 'src/generated.ts' },
                    result: { tokens: 2500, seed: `${seed}:long` },
                  },
                ],
              },
              { text: 'Read it.' },
            ],
          },
          ...turns(1, 1),
          { kind: 'prune', thresholdChars: 4000, keepChars: 1000, skipLastNodes: 4 },
          ...turns(1, 2),
        ],
      }
  }
}

/** Where and how a provider's keyed cases run. */
export interface KeyedRunOptions {
  /** Keys and base URLs (the real APIs, or `cachelab serve` on loopback). */
  env: Readonly<Record<string, string | undefined>>
  salt: string
  /** Model override; the catalog default otherwise. */
  model?: string
}

/** What a provider's keyed run observed. */
export interface KeyedRun {
  entry: ModelEntry
  /** Every case, skipped ones included (they have no sessions). */
  cases: KeyedCase[]
  /** The rows of each case that ran, by `<scenario>.<variant>`. */
  sessions: Map<string, StepRow[]>
  /** Every successful step of every session beside the simulator's prediction. */
  fidelity: FidelityRow[]
}

/**
 * Run a provider's applicable keyed cases live, in order. One predictor and one clock serve them all, as
 * the provider's one account does; the namespaces keep their caches apart in both.
 */
export async function runKeyed(provider: ProviderId, options: KeyedRunOptions): Promise<KeyedRun> {
  const entry = resolveModel(provider, options.model)
  const cases = keyedCases(provider, entry, options.salt)
  const predictor = new CacheSimulators()
  const clock = new VirtualClock()
  const sessions = new Map<string, StepRow[]>()
  const fidelity: FidelityRow[] = []
  for (const { scenario, variant, skip } of cases) {
    if (skip !== undefined) continue
    const result = await runSession(
      { scenario, variant, provider },
      {
        runId: `keyed-${options.salt}`,
        model: entry.model,
        stream: false,
        env: options.env,
        predictor,
        clock,
      },
    )
    sessions.set(`${scenario.name}.${variant.name}`, result.rows)
    fidelity.push(...fidelityRows(result.rows, result.predicted))
  }
  return { entry, cases, sessions, fidelity }
}

/** Environment variables of the per-step tolerance. */
export const TOLERANCE_ENV = {
  tokens: 'CACHELAB_KEYED_TOLERANCE_TOKENS',
  ratio: 'CACHELAB_KEYED_TOLERANCE_RATIO',
} as const

/** The per-step tolerance from the environment; each part unset takes its live default. */
export function keyedTolerance(env: Readonly<Record<string, string | undefined>>): FidelityTolerance {
  const read = (name: string, fallback: number, limit: number): number => {
    const text = env[name]?.trim()
    if (text === undefined || text === '') return fallback
    const value = Number(text)
    if (!Number.isFinite(value) || value < 0 || value > limit)
      throw new CachelabError(
        'usage',
        `${name} must be a number from 0 to ${limit}, not ${JSON.stringify(text)}`,
      )
    return value
  }
  return {
    tokens: read(TOLERANCE_ENV.tokens, LIVE_TOLERANCE.tokens, Number.MAX_SAFE_INTEGER),
    ratio: read(TOLERANCE_ENV.ratio, LIVE_TOLERANCE.ratio, 1),
  }
}

/**
 * The catalog with one cache rule changed per kind, for a loopback server that disagrees with the
 * prediction by more than the live tolerance: Anthropic's minimum at Haiku's 4,096 (the keyed prompts
 * start below it), OpenAI's hits in 1,024-token steps instead of 128, OpenAI breakpoints' minimum at
 * 4,096, DeepSeek's units readable only an hour after they are persisted, Gemini's minimum at 8,192.
 */
export function perturbedCatalog(): ModelEntry[] {
  return CATALOG.map(perturbed)
}

function perturbed(entry: ModelEntry): ModelEntry {
  switch (entry.cache.kind) {
    case 'anthropic':
    case 'bedrock':
      return { ...entry, cache: { ...entry.cache, minTokens: 4096 } }
    case 'openai-prefix':
      return { ...entry, cache: { ...entry.cache, increment: 1024 } }
    case 'openai-breakpoint':
      return { ...entry, cache: { ...entry.cache, minTokens: 4096 } }
    case 'deepseek':
      return { ...entry, cache: { ...entry.cache, persistDelaySeconds: 3600 } }
    case 'gemini':
      return { ...entry, cache: { ...entry.cache, minTokens: 8192 } }
  }
}
