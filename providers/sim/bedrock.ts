// Bedrock's prompt cache for Converse: cache checkpoints (`cachePoint` blocks) work as Anthropic's
// breakpoints do, so the Anthropic simulator runs them on the translated body with Bedrock's rules as
// its parameters (minimum per checkpoint, lookback, TTLs); Bedrock's own checks and Nova's cap come first.

import { CachelabError } from '../../harness/errors.ts'
import {
  type AnthropicCacheRules,
  type BedrockCacheRules,
  type ModelEntry,
  simulationModel,
} from '../catalog.ts'
import { AnthropicCacheSimulator } from './anthropic.ts'
import {
  type ConverseTranslation,
  checkCachePoints,
  conversePrompt,
  type RenamedPrompt,
  translateConverse,
} from './linearize-bedrock.ts'
import { sharedTokenCounter } from './tokens.ts'
import type { PreviousRequest, Prompt, Simulation, SimulationRequest, SimulatorOptions } from './types.ts'

type Body = Record<string, unknown>

/** A Bedrock entry as the Anthropic simulator reads it: the same breakpoint rules, Bedrock's values. */
function asAnthropicEntry(entry: ModelEntry, rules: BedrockCacheRules): ModelEntry {
  const { kind: _kind, ttlOptions: _ttls, toolCheckpoints: _tools, maxCachedTokens: _cap, ...shared } = rules
  // Converse requests carry no Anthropic `system` blocks, so no billing block either.
  const cache: AnthropicCacheRules = { kind: 'anthropic', ...shared, billingBlock: 'cached' }
  return { ...entry, cache }
}

/** Models one AWS account's Bedrock prompt cache (one prefix trie per model, as Anthropic's). */
export class BedrockCacheSimulator {
  private readonly models: readonly ModelEntry[] | undefined
  private readonly anthropic: AnthropicCacheSimulator
  /** The Anthropic-rule entries handed to the inner simulator, by model id. */
  private readonly translated: ModelEntry[] = []

  constructor(options: SimulatorOptions = {}) {
    this.models = options.models
    this.anthropic = new AnthropicCacheSimulator({
      ...options,
      counter: options.counter ?? sharedTokenCounter,
      models: this.translated,
    })
  }

  /** Remove what no request at `at` or later can read (serve's memory budget); the count removed. */
  prune(at: number): number {
    return this.anthropic.prune(at)
  }

  /** The last prompt simulated, as the Anthropic simulator saw it and renamed (the next request repeats it). */
  private last: RenamedPrompt | undefined

  /** The linearized prompt of a body, nodes in Converse's indices, without touching cache state. */
  linearize(body: Body): Prompt {
    const translation = this.prepare(body).translation
    return conversePrompt(this.anthropic.linearize(translation.body), translation)
  }

  /** Simulate one Converse request; throws SimulatorRejection (a ValidationException) for one Bedrock refuses. */
  simulate(request: SimulationRequest): Simulation {
    const { rules, translation } = this.prepare(request.body)
    checkCachePoints(request.body, rules)
    // The model a previous request ran on is read with its rules: the inner simulator must know them.
    if (request.previous?.model !== undefined) this.entryOf(request.previous.model)
    const body = rules.maxCachedTokens === undefined ? translation.body : this.capped(translation, rules)
    const simulation = this.anthropic.simulate({ ...request, body, ...this.anthropicPrevious(request) })
    const prompt = conversePrompt(simulation.prompt, translation, this.last)
    this.last = { anthropic: simulation.prompt, converse: prompt }
    return { ...simulation, prompt }
  }

  /**
   * The previous request as the Anthropic simulator knows it, when it is the last one simulated here:
   * the same segments before renaming, so its counterfactual compares the shared history by reference.
   * Only the wire nodes differ, which no read depends on.
   */
  private anthropicPrevious(request: SimulationRequest): { previous?: PreviousRequest } {
    const previous = request.previous
    const last = this.last
    if (previous === undefined || last === undefined || previous.prompt.segments !== last.converse.segments)
      return {}
    const { base: _base, ...prompt } = previous.prompt
    return { previous: { ...previous, prompt: { ...prompt, segments: last.anthropic.segments } } }
  }

  private prepare(body: Body): { rules: BedrockCacheRules; translation: ConverseTranslation } {
    const { entry, rules } = this.entryOf(typeof body.modelId === 'string' ? body.modelId : '')
    return { rules, translation: translateConverse({ ...body, modelId: entry.model }) }
  }

  /** A model's entry and rules; its Anthropic-rule entry is handed to the inner simulator on first use. */
  private entryOf(name: string): { entry: ModelEntry; rules: BedrockCacheRules } {
    const entry = this.models?.find((model) => model.model === name) ?? simulationModel('bedrock', name)
    if (entry.cache.kind !== 'bedrock')
      throw new CachelabError('invariant', `model ${name} has ${entry.cache.kind} cache rules, not bedrock`)
    if (!this.translated.some((known) => known.model === entry.model))
      this.translated.push(asAnthropicEntry(entry, entry.cache))
    return { entry, rules: entry.cache }
  }

  /**
   * The translated body without the markers of checkpoints whose prefix passes the model's cap (Nova
   * caches at most `maxCachedTokens`): such a checkpoint writes nothing, as one below the minimum.
   */
  private capped(translation: ConverseTranslation, rules: BedrockCacheRules): Body {
    const cap = rules.maxCachedTokens ?? Number.POSITIVE_INFINITY
    const prompt = this.anthropic.linearize(translation.body)
    const over = prompt.segments.filter(
      (segment, index) => segment.breakpoint !== undefined && (prompt.cumulative[index] ?? 0) > cap,
    )
    if (over.length === 0) return translation.body
    const body = structuredClone(translation.body)
    for (const { node } of over) {
      const part = body[node.part]
      const entry = Array.isArray(part) ? part[node.index] : undefined
      const target =
        node.block === undefined
          ? entry
          : (entry as { content?: unknown[] } | undefined)?.content?.[node.block]
      if (typeof target === 'object' && target !== null) delete (target as Body).cache_control
    }
    return body
  }
}
