// Building a linearized prompt: each segment's tokens are counted once through the shared memo and
// scaled by the provider's factor; cumulative sums are kept for prefix arithmetic.

import type { TokenCounter } from './tokens.ts'
import type { Breakpoint, Prompt, Segment, WireNode } from './types.ts'

/** What a linearizer supplies for one segment. */
export interface SegmentDraft {
  frame: string
  text: string
  /** Unscaled framing tokens (role markers, structure). */
  framing: number
  node: WireNode
  /** Tokens that stand for non-text content (an image); unscaled, added to the text's count. */
  contentTokens?: number
  breakpoint?: Breakpoint
  runKind?: 'tool-use' | 'tool-result'
}

/** Scale an o200k count to the provider's tokenizer. */
export function scaleTokens(count: number, scale: number): number {
  return scale === 1 ? count : Math.round(count * scale)
}

/** Accumulates segments in prompt order. */
export class PromptBuilder {
  private readonly segments: Segment[] = []
  private readonly cumulative: number[] = []
  private total = 0
  private runCounter = 0
  private lastRunKind: 'tool-use' | 'tool-result' | undefined
  private readonly counter: TokenCounter
  private readonly scale: number

  constructor(counter: TokenCounter, scale: number) {
    this.counter = counter
    this.scale = scale
  }

  add(draft: SegmentDraft): void {
    const framing = scaleTokens(draft.framing, this.scale)
    const content = scaleTokens(this.counter.count(draft.text) + (draft.contentTokens ?? 0), this.scale)
    const tokens = framing + content
    let run: number | undefined
    if (draft.runKind !== undefined) {
      if (draft.runKind !== this.lastRunKind) this.runCounter += 1
      run = this.runCounter
    }
    this.lastRunKind = draft.runKind
    const segment: Segment = {
      key: `${draft.frame}\u0001${draft.text}`,
      frame: draft.frame,
      text: draft.text,
      framing,
      tokens,
      node: draft.node,
      ...(draft.breakpoint !== undefined ? { breakpoint: draft.breakpoint } : {}),
      ...(run !== undefined ? { run } : {}),
    }
    this.segments.push(segment)
    this.total += tokens
    this.cumulative.push(this.total)
  }

  build(trailing: number): Prompt {
    const scaledTrailing = scaleTokens(trailing, this.scale)
    return {
      segments: this.segments,
      cumulative: this.cumulative,
      trailing: scaledTrailing,
      total: this.total + scaledTrailing,
    }
  }
}

/** Tokens of segments 0..count-1. */
export function tokensThrough(prompt: Prompt, count: number): number {
  return count <= 0 ? 0 : (prompt.cumulative[count - 1] ?? 0)
}

/** A printable name for a wire node: `messages[3].1`, `tools[0]`, `system`. */
export function describeNode(node: WireNode): string {
  const base = `${node.part}[${node.index}]`
  return node.block === undefined ? base : `${base}.${node.block}`
}
