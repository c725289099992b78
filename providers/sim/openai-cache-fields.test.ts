import { describe, expect, it } from 'vitest'
import { cacheOptions } from './openai-cache-fields.ts'
import { SimulatorRejection } from './types.ts'

const marked = { type: 'input_text', text: 'x', prompt_cache_breakpoint: { mode: 'explicit' } }

function rejection(run: () => unknown): SimulatorRejection {
  try {
    run()
  } catch (error) {
    if (error instanceof SimulatorRejection) return error
    throw error
  }
  throw new Error('expected a 400')
}

describe("OpenAI's prompt-cache fields", () => {
  it('reads the mode and ttl, with implicit caching by default', () => {
    expect(cacheOptions('responses', { input: [] }, true)).toEqual({ mode: 'implicit', ttl: undefined })
    expect(
      cacheOptions('responses', { prompt_cache_options: { mode: 'explicit', ttl: '30m' }, input: [] }, true),
    ).toEqual({ mode: 'explicit', ttl: '30m' })
  })

  it('refuses the fields on a model before GPT-5.6, as the API does', () => {
    const options = rejection(() => cacheOptions('responses', { prompt_cache_options: {}, input: [] }, false))
    expect(options.status).toBe(400)
    const marker = rejection(() =>
      cacheOptions('responses', { input: [{ type: 'message', role: 'user', content: [marked] }] }, false),
    )
    expect(marker.status).toBe(400)
  })

  it('refuses a ttl other than 30m and a marker on a part that cannot carry one, naming where', () => {
    const ttl = rejection(() =>
      cacheOptions('responses', { prompt_cache_options: { ttl: '1h' }, input: [] }, true),
    )
    expect(JSON.stringify(ttl.body)).toMatch(/prompt_cache_options\.ttl/)
    const onOutput = rejection(() =>
      cacheOptions(
        'responses',
        {
          input: [{ type: 'message', role: 'assistant', content: [{ ...marked, type: 'output_text' }] }],
        },
        true,
      ),
    )
    expect(JSON.stringify(onOutput.body)).toMatch(/input\[0\]\.content\[0\]/)
  })

  it('checks what a session body adds after the items an earlier body passed with, and an item replaced in place', () => {
    const user = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi.' }] }
    const onOutput = {
      type: 'message',
      role: 'assistant',
      content: [{ ...marked, type: 'output_text' }],
    }
    const input: unknown[] = [user, { type: 'message', role: 'user', content: [marked] }]
    expect(cacheOptions('responses', { input }, true).mode).toBe('implicit')
    const added = rejection(() => cacheOptions('responses', { input: [...input, onOutput] }, true))
    expect(JSON.stringify(added.body)).toMatch(/input\[2\]\.content\[0\]/)
    input[1] = onOutput
    const replaced = rejection(() => cacheOptions('responses', { input }, true))
    expect(JSON.stringify(replaced.body)).toMatch(/input\[1\]\.content\[0\]/)
  })

  it('checks the same items again on a model without breakpoints', () => {
    const input = [{ type: 'message', role: 'user', content: [marked] }]
    cacheOptions('responses', { input }, true)
    expect(rejection(() => cacheOptions('responses', { input }, false)).status).toBe(400)
  })
})
