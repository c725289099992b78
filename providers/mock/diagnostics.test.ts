import { describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import type { AssistantMessage } from '../../harness/types.ts'
import { CacheSimulators } from '../sim/index.ts'
import {
  anthropicDiagnosis,
  anthropicSettings,
  type Fingerprint,
  FingerprintStore,
  fingerprintOf,
  responsesDiagnosis,
  responsesSettings,
} from './diagnostics.ts'

const ok: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'OK.' }] }
const system = fillerText(3000, 'diagnostics-system')
const tool = (name: string) => ({
  name,
  description: fillerText(200, `tool-${name}`),
  input_schema: { type: 'object', properties: { path: { type: 'string' } } },
})

type Body = Record<string, unknown>

/** An Anthropic conversation of `turns` questions, cached automatically. */
function messagesBody(turns: number, changes: Body = {}): Body {
  const messages: Body[] = []
  for (let turn = 0; turn < turns; turn += 1) {
    messages.push({ role: 'user', content: fillerText(300, `question-${turn}`) })
    if (turn < turns - 1) messages.push({ role: 'assistant', content: `Answer ${turn}.` })
  }
  return {
    model: 'claude-sonnet-4-6',
    max_tokens: 64,
    tools: [tool('read_file'), tool('grep')],
    system,
    messages,
    cache_control: { type: 'ephemeral' },
    ...changes,
  }
}

/** The fingerprints of a sequence of Anthropic bodies, simulated in order on one account. */
function anthropicFingerprints(...bodies: Body[]): Fingerprint[] {
  const simulators = new CacheSimulators()
  return bodies.map((body, index) => {
    const simulation = simulators.simulate('anthropic-messages', { body, at: index * 10, output: ok })
    const model = String(body.model)
    return fingerprintOf(
      model,
      anthropicSettings(body, []),
      simulation.prompt,
      simulation.trace.carry.tokens,
      0,
    )
  })
}

describe("Anthropic's cache diagnostics, from the simulator's prompts", () => {
  it('find nothing when the messages only grew: null, as the API answers', () => {
    const [first, second] = anthropicFingerprints(messagesBody(1), messagesBody(2))
    expect(anthropicDiagnosis(first, second as Fingerprint)).toBeNull()
  })

  it('name a system prompt rewritten in place, with what the previous request cached after the tools', () => {
    const [first, second] = anthropicFingerprints(
      messagesBody(1),
      messagesBody(2, { system: `Today is Monday. ${system}` }),
    ) as [Fingerprint, Fingerprint]
    const tools = first.segments
      .filter((segment) => segment[0].startsWith('tools['))
      .reduce((sum, s) => sum + s[2], 0)
    expect(first.cached).toBeGreaterThan(3000)
    expect(anthropicDiagnosis(first, second)).toEqual({
      cache_miss_reason: { type: 'system_changed', cache_missed_input_tokens: first.cached - tools },
    })
  })

  it('name the tools before the system prompt, the earliest divergence in prompt order', () => {
    const [first, second] = anthropicFingerprints(
      messagesBody(1),
      messagesBody(2, { tools: [tool('grep'), tool('read_file')], system: `Changed. ${system}` }),
    ) as [Fingerprint, Fingerprint]
    expect(anthropicDiagnosis(first, second)).toEqual({
      cache_miss_reason: { type: 'tools_changed', cache_missed_input_tokens: first.cached },
    })
  })

  it('name tools a request dropped, though its system prompt stands where the first tool was', () => {
    const [first, second] = anthropicFingerprints(
      messagesBody(1),
      messagesBody(2, { tools: undefined, system: 'Summarize the conversation.' }),
    ) as [Fingerprint, Fingerprint]
    expect(anthropicDiagnosis(first, second)?.cache_miss_reason?.type).toBe('tools_changed')
  })

  it('name an earlier message edited rather than appended to', () => {
    const edited = messagesBody(3)
    ;(edited.messages as Body[])[0] = { role: 'user', content: 'A shorter first question.' }
    const [first, second] = anthropicFingerprints(messagesBody(2), edited) as [Fingerprint, Fingerprint]
    const reason = anthropicDiagnosis(first, second)?.cache_miss_reason
    expect(reason?.type).toBe('messages_changed')
    expect(reason !== null && 'cache_missed_input_tokens' in (reason ?? {})).toBe(true)
  })

  it('name another model, or another speed, with everything the previous request cached', () => {
    const [first, second] = anthropicFingerprints(
      messagesBody(1),
      messagesBody(2, { model: 'claude-opus-4-8' }),
    )
    expect(anthropicDiagnosis(first, second as Fingerprint)).toEqual({
      cache_miss_reason: { type: 'model_changed', cache_missed_input_tokens: first?.cached },
    })
    const [plain, fast] = anthropicFingerprints(messagesBody(1), messagesBody(2, { speed: 'fast' }))
    expect(anthropicDiagnosis(plain, fast as Fingerprint)?.cache_miss_reason?.type).toBe('model_changed')
  })

  it('answer unavailable when only another prompt-affecting parameter changed (tool choice, thinking, betas)', () => {
    const [first, second] = anthropicFingerprints(
      messagesBody(1),
      messagesBody(2, { tool_choice: { type: 'any' } }),
    ) as [Fingerprint, Fingerprint]
    expect(anthropicDiagnosis(first, second)).toEqual({ cache_miss_reason: { type: 'unavailable' } })
    const simulators = new CacheSimulators()
    const fingerprint = (betas: string[]) => {
      const body = messagesBody(1)
      const simulation = simulators.simulate('anthropic-messages', { body, at: 0, output: ok })
      return fingerprintOf('claude-sonnet-4-6', anthropicSettings(body, betas), simulation.prompt, 0, 0)
    }
    expect(anthropicDiagnosis(fingerprint([]), fingerprint(['context-1m-2025-08-07']))).toEqual({
      cache_miss_reason: { type: 'unavailable' },
    })
  })

  it('answer previous_message_not_found for a message it kept no fingerprint of', () => {
    const [first] = anthropicFingerprints(messagesBody(1)) as [Fingerprint]
    expect(anthropicDiagnosis(undefined, first)).toEqual({
      cache_miss_reason: { type: 'previous_message_not_found' },
    })
  })
})

/** A Responses body on GPT-5.6: instructions, tools and `turns` questions. */
function responsesBody(turns: number, changes: Body = {}): Body {
  const input: Body[] = []
  for (let turn = 0; turn < turns; turn += 1) {
    input.push({ role: 'user', content: fillerText(300, `question-${turn}`) })
    if (turn < turns - 1)
      input.push({
        role: 'assistant',
        content: [{ type: 'output_text', text: `Answer ${turn}.`, annotations: [] }],
      })
  }
  return {
    model: 'gpt-5.6-sol',
    instructions: system,
    input,
    tools: [
      { type: 'function', name: 'get_time', parameters: { type: 'object', properties: {} } },
      { type: 'function', name: 'read_file', parameters: { type: 'object', properties: {} } },
    ],
    prompt_cache_key: 'session-1',
    ...changes,
  }
}

function responsesFingerprints(...bodies: Body[]): Fingerprint[] {
  const simulators = new CacheSimulators()
  return bodies.map((body, index) => {
    const simulation = simulators.simulate('openai-responses', { body, at: index * 10, output: ok })
    return fingerprintOf(
      String(body.model),
      responsesSettings(body),
      simulation.prompt,
      simulation.trace.carry.tokens,
      0,
    )
  })
}

describe("OpenAI's prompt cache diagnostics, from the simulator's prompts", () => {
  it('answer cache_hit when the input only grew', () => {
    const [first, second] = responsesFingerprints(responsesBody(1), responsesBody(2))
    expect(responsesDiagnosis(first, second as Fingerprint)).toEqual({ type: 'cache_hit' })
  })

  it("name a renamed tool (the guide's example), with the reusable and the missed tokens", () => {
    const [first, second] = responsesFingerprints(
      responsesBody(1),
      responsesBody(1, {
        tools: [
          { type: 'function', name: 'get_date', parameters: { type: 'object', properties: {} } },
          { type: 'function', name: 'read_file', parameters: { type: 'object', properties: {} } },
        ],
      }),
    ) as [Fingerprint, Fingerprint]
    expect(first.cached).toBeGreaterThan(3000)
    expect(responsesDiagnosis(first, second)).toEqual({
      type: 'cache_miss',
      reason: 'tools_changed',
      cache_missed_tokens: first.cached,
      comparison_reusable_tokens: first.cached,
    })
  })

  it('name instructions with a timestamp as changed input, missing what followed the tools', () => {
    const [first, second] = responsesFingerprints(
      responsesBody(1),
      responsesBody(2, { instructions: `Now: 12:00. ${system}` }),
    ) as [Fingerprint, Fingerprint]
    const diagnosis = responsesDiagnosis(first, second)
    expect(diagnosis).toMatchObject({ type: 'cache_miss', reason: 'input_changed' })
    expect(diagnosis.type === 'cache_miss' && diagnosis.cache_missed_tokens).toBeLessThan(first.cached)
  })

  it('name the settings in the guide’s order: model, cache key, service tier, then format, effort, verbosity', () => {
    const reasonOf = (changes: Body) => {
      const [first, second] = responsesFingerprints(responsesBody(1), responsesBody(2, changes))
      const diagnosis = responsesDiagnosis(first, second as Fingerprint)
      return diagnosis.type === 'cache_miss' ? diagnosis.reason : diagnosis.type
    }
    expect(reasonOf({ model: 'gpt-5.6-terra' })).toBe('model_changed')
    expect(reasonOf({ prompt_cache_key: 'session-2', model: 'gpt-5.6-sol' })).toBe('prompt_cache_key_changed')
    expect(reasonOf({ service_tier: 'priority' })).toBe('service_tier_changed')
    expect(reasonOf({ service_tier: 'auto' })).toBe('cache_hit')
    expect(reasonOf({ text: { format: { type: 'json_object' } } })).toBe('text_format_changed')
    expect(reasonOf({ reasoning: { effort: 'high' } })).toBe('reasoning_effort_changed')
    expect(reasonOf({ text: { verbosity: 'low' } })).toBe('verbosity_changed')
  })

  it('name input replaced by a compaction item context_compacted', () => {
    const compacted = responsesBody(1)
    compacted.input = [{ type: 'compaction', encrypted_content: 'opaque' }, ...(compacted.input as Body[])]
    const [first, second] = responsesFingerprints(responsesBody(2), compacted) as [Fingerprint, Fingerprint]
    expect(responsesDiagnosis(first, second, (index) => index === 0)).toMatchObject({
      type: 'cache_miss',
      reason: 'context_compacted',
    })
  })

  it('answer cache_hit for a change past everything the compared response left cached', () => {
    const previous: Fingerprint = {
      ...(responsesFingerprints(responsesBody(2))[0] as Fingerprint),
      cached: 0,
    }
    const edited = responsesBody(3)
    ;(edited.input as Body[])[0] = { role: 'user', content: 'Shorter.' }
    const [current] = responsesFingerprints(edited) as [Fingerprint]
    expect(responsesDiagnosis(previous, current)).toEqual({ type: 'cache_hit' })
  })

  it('answer comparison_response_not_found for a response it kept no record of', () => {
    const [first] = responsesFingerprints(responsesBody(1)) as [Fingerprint]
    expect(responsesDiagnosis(undefined, first)).toEqual({ type: 'comparison_response_not_found' })
  })
})

describe('the fingerprints a mock keeps', () => {
  // The second request resends the first's message objects, as a session through the mocks does.
  const earlier = messagesBody(6)
  const later = {
    ...earlier,
    messages: [
      ...(earlier.messages as Body[]),
      { role: 'assistant', content: 'Answer 5.' },
      { role: 'user', content: 'And then?' },
    ],
  }
  const [first, second] = anthropicFingerprints(earlier, later) as [Fingerprint, Fingerprint]

  it('are named per API, and not after their lifetime', () => {
    const store = new FingerprintStore(1024 * 1024, 3600)
    store.remember('anthropic-messages', 'msg_1', first)
    expect(store.find('anthropic-messages', 'msg_1', 3600)).toBe(first)
    expect(store.find('openai-responses', 'msg_1', 0)).toBeUndefined()
    expect(store.find('anthropic-messages', 'msg_1', 3601)).toBeUndefined()
  })

  it('count a segment two requests share once, and forget the oldest past their budget', () => {
    const store = new FingerprintStore(Number.POSITIVE_INFINITY)
    store.remember('anthropic-messages', 'msg_1', first)
    const one = store.bytes
    store.remember('anthropic-messages', 'msg_2', second)
    // The second request repeats the first's segments: it adds its references and its new segments only.
    expect(store.bytes - one).toBeLessThan(one / 2)
    const bounded = new FingerprintStore(one + 1)
    bounded.remember('anthropic-messages', 'msg_1', first)
    bounded.remember('anthropic-messages', 'msg_2', second)
    expect(bounded.find('anthropic-messages', 'msg_1', 0)).toBeUndefined()
    expect(bounded.find('anthropic-messages', 'msg_2', 0)).toBe(second)
    expect(bounded.size).toBe(1)
    store.clear()
    expect(store.bytes).toBe(0)
  })
})
