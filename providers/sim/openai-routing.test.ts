import { describe, expect, it } from 'vitest'
import { seededRandom } from '../../harness/random.ts'
import { OpenAIRouter } from './openai-routing.ts'
import { PromptBuilder } from './prompt.ts'
import { TokenCounter } from './tokens.ts'

const counter = new TokenCounter()
const prompt = (...texts: string[]) => {
  const builder = new PromptBuilder(counter, 1)
  for (const [index, text] of texts.entries())
    builder.add({ frame: 'user', text, framing: 3, node: { part: 'messages', index } })
  return builder.build(3)
}
const body = (key?: string) => ({ model: 'gpt-5.4', ...(key !== undefined ? { prompt_cache_key: key } : {}) })

describe('routing OpenAI requests to machines', () => {
  it('sends prompts that share their start and cache key to one machine, whatever follows', () => {
    const router = new OpenAIRouter(counter, undefined, false)
    const start = 'A long shared start. '.repeat(80)
    const first = router.route(256, 16, 15, body('k'), prompt(start, 'one'), 0)
    const second = router.route(256, 16, 15, body('k'), prompt(start, 'two, much later'), 5)
    expect(second).toEqual(first)
  })

  it('gives an unchanged extension the machine of the request when both share the route, else its own hash', () => {
    const router = new OpenAIRouter(counter, undefined, false)
    const start = 'A long shared start. '.repeat(80)
    const route = router.route(256, 16, 15, body('k'), prompt(start, 'one'), 0)
    expect(router.candidateRoute(256, 16, body('k'), prompt(start, 'other'), route).machine).toBe(
      route.machine,
    )
    const elsewhere = router.route(256, 16, 15, body('other-key'), prompt(start), 0)
    expect(router.candidateRoute(256, 16, body('other-key'), prompt(start), route).machine).toBe(
      elsewhere.machine,
    )
  })

  it('keys a segment it has cut before as a router that never saw it does, whatever budget or prompt follows', () => {
    const seen = new OpenAIRouter(counter, undefined, false)
    const start = 'A long shared start, cut by the routing budget. '.repeat(80)
    const shared = prompt(start, 'one')
    const routes = [256, 64, 256, 1024].map((budget) => [
      seen.route(budget, 16, 15, body('k'), shared, 0),
      seen.route(budget, 16, 15, body('k'), prompt(start, 'two'), 0),
    ])
    const fresh = [256, 64, 256, 1024].map((budget) => [
      new OpenAIRouter(counter, undefined, false).route(budget, 16, 15, body('k'), shared, 0),
      new OpenAIRouter(counter, undefined, false).route(budget, 16, 15, body('k'), prompt(start, 'two'), 0),
    ])
    expect(routes).toEqual(fresh)
    expect(new Set(routes.map(([route]) => route?.key)).size).toBe(3)
  })

  it('spills traffic above the per-key rate to other machines only when overflow is on with a seed', () => {
    const busy = (router: OpenAIRouter) =>
      new Set(
        Array.from(
          { length: 60 },
          (_, index) => router.route(256, 16, 15, body('k'), prompt('x'), index / 2).machine,
        ),
      )
    expect(busy(new OpenAIRouter(counter, undefined, true)).size).toBe(1)
    expect(busy(new OpenAIRouter(counter, seededRandom(7), false)).size).toBe(1)
    expect(busy(new OpenAIRouter(counter, seededRandom(7), true)).size).toBeGreaterThan(1)
  })
})
