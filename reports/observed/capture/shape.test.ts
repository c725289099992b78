import { describe, expect, it } from 'vitest'
import { itemDigest, itemsOf } from '../../../providers/wire/digest.ts'
import { shapeOf } from './shape.ts'

const shape = (body: Record<string, unknown>) =>
  shapeOf('anthropic-messages', body, itemsOf(body).map(itemDigest))
const tools = [{ name: 'Read', input_schema: { type: 'object' } }]

describe('the shape of a request', () => {
  it('is the same for two requests of one conversation, whatever their messages', () => {
    const first = shape({ system: 'S', tools, messages: [{ role: 'user', content: 'a' }] })
    const later = shape({ system: 'S', tools, messages: [{ role: 'user', content: 'b' }] })
    expect(later).toEqual(first)
  })

  it('tells a title request apart: its own prompt, no tools, a JSON answer', () => {
    const main = shape({ system: 'S', tools, messages: [] })
    const title = shape({
      system: 'Name the session.',
      output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
      messages: [],
    })
    expect(title.system).not.toBe(main.system)
    expect([title.tools, title.structured, main.structured]).toEqual(['', true, false])
  })

  it('ignores cache markers on the system prompt and tools', () => {
    const marked = shape({
      system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral' } }],
      tools,
      messages: [],
    })
    const bare = shape({ system: [{ type: 'text', text: 'S' }], tools, messages: [] })
    expect(marked).toEqual(bare)
  })
})
