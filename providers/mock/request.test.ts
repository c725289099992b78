import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_NESTING, nestingDepth, nestingProblem } from './request.ts'

/** An array nested `depth` deep. */
function deep(depth: number): unknown {
  let value: unknown = []
  for (let level = 1; level < depth; level += 1) value = [value]
  return value
}

const tooDeep = (body: unknown) => nestingProblem(body) !== undefined

describe('nestingProblem', () => {
  it('refuses a body exactly when it nests past the limit, wherever the depth is', () => {
    // The body is one level, `messages` a second, the item a third: an item of MAX_NESTING - 2 levels fits.
    const item = (depth: number) => ({ role: 'user', content: deep(depth - 1) })
    expect(tooDeep({ messages: [item(MAX_NESTING - 2)] })).toBe(false)
    expect(tooDeep({ messages: [item(MAX_NESTING - 1)] })).toBe(true)
    expect(tooDeep({ tools: [{ parameters: deep(MAX_NESTING - 3) }] })).toBe(false)
    expect(tooDeep({ tools: [{ parameters: deep(MAX_NESTING - 2) }] })).toBe(true)
    expect(tooDeep({ contents: [{ parts: deep(MAX_NESTING) }] })).toBe(true)
  })

  it('answers as nestingDepth does on any body, an item sent again included', () => {
    const item = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.integer(), fc.string(), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 3 }),
      object: fc.dictionary(fc.string({ maxLength: 3 }), tie('value'), { maxKeys: 3 }),
    })).value
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 4 }),
        fc.constantFrom('messages', 'contents', 'input', 'tools'),
        (items, field) => {
          const first = { [field]: items }
          // The same item objects again, behind a deeper one: what a session's next request is.
          const next = { [field]: [...items, deep(MAX_NESTING - 1)] }
          for (const body of [first, next, first])
            expect(tooDeep(body)).toBe(nestingDepth(body) > MAX_NESTING)
        },
      ),
    )
  })
})
