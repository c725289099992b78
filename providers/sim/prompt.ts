// Building a linearized prompt: each segment's tokens are counted once through the shared memo and
// scaled by the provider's factor; cumulative sums are kept for prefix arithmetic.

import { LONG_TEXT_CHARACTERS, type TokenCounter } from './tokens.ts'
import type { Breakpoint, Prompt, Segment, SimCounts, WireNode } from './types.ts'

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

/** The tool-run numbering of a builder at some point. */
export interface RunState {
  counter: number
  last: 'tool-use' | 'tool-result' | undefined
}

/**
 * Accumulates segments in prompt order. A builder started `from` an earlier prompt keeps that prompt's
 * leading segments by reference and copies them once, when it builds: a session's long history is not
 * copied segment by segment on every request.
 */
export class PromptBuilder {
  /** The earlier prompt's segments and cumulative tokens this builder starts with, and how many. */
  private prefix: { segments: readonly Segment[]; cumulative: readonly number[]; count: number } = {
    segments: [],
    cumulative: [],
    count: 0,
  }
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

  /**
   * A builder that starts with the first `count` segments of an earlier prompt, with `runs` as the
   * tool-run state after them.
   */
  static from(
    prompt: Prompt,
    count: number,
    counter: TokenCounter,
    scale: number,
    runs?: RunState,
  ): PromptBuilder {
    const builder = new PromptBuilder(counter, scale)
    builder.prefix = { segments: prompt.segments, cumulative: prompt.cumulative, count }
    builder.total = count === 0 ? 0 : (prompt.cumulative[count - 1] ?? 0)
    builder.runCounter = runs?.counter ?? 0
    builder.lastRunKind = runs?.last
    return builder
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
      frame: draft.frame,
      text: draft.text,
      framing,
      tokens,
      node: draft.node,
      ...(draft.breakpoint !== undefined ? { breakpoint: draft.breakpoint } : {}),
      ...(run !== undefined ? { run } : {}),
    }
    // A long text's tokens stay with its segment: a later request compared with it (stored in a trie)
    // must not tokenize it again once the memo has forgotten it (serve holds them only while in flight).
    if (draft.text.length >= LONG_TEXT_CHARACTERS) this.counter.tokensOf(segment)
    this.segments.push(segment)
    this.total += tokens
    this.cumulative.push(this.total)
  }

  /** How many segments were added so far (a mark for `since`). */
  mark(): number {
    return this.prefix.count + this.segments.length
  }

  /** The segments added since `mark`. */
  since(mark: number): Segment[] {
    const own = mark - this.prefix.count
    if (own >= 0) return this.segments.slice(own)
    return this.prefix.segments.slice(mark, this.prefix.count).concat(this.segments)
  }

  /** Add segments built earlier for the same content; `runs` restores the tool-run state after them. */
  append(segments: readonly Segment[], runs?: RunState): void {
    for (const segment of segments) {
      this.segments.push(segment)
      this.total += segment.tokens
      this.cumulative.push(this.total)
    }
    this.runCounter = runs?.counter ?? this.runCounter
    this.lastRunKind = runs?.last
  }

  /** Where tool-run numbering stands (to resume it after appending reused segments). */
  runState(): RunState {
    return { counter: this.runCounter, last: this.lastRunKind }
  }

  build(trailing: number): Prompt {
    const scaledTrailing = scaleTokens(trailing, this.scale)
    const { count } = this.prefix
    return {
      segments: count === 0 ? this.segments : joinPrefix(this.prefix.segments, count, this.segments),
      cumulative: count === 0 ? this.cumulative : joinPrefix(this.prefix.cumulative, count, this.cumulative),
      trailing: scaledTrailing,
      total: this.total + scaledTrailing,
      ...(count > 0 ? { base: { segments: this.prefix.segments, count } } : {}),
    }
  }
}

/** The first `count` items of `head` followed by `tail`, in one allocation when the whole head is kept. */
export function joinPrefix<T>(head: readonly T[], count: number, tail: readonly T[]): T[] {
  return count === head.length ? head.concat(tail) : head.slice(0, count).concat(tail)
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

/** The counts of a request to a cache that bills no writes: what it read, the rest uncached. */
export function unwrittenCounts(prompt: Prompt, read: number, output: number): SimCounts {
  return {
    input: prompt.total,
    read,
    write: 0,
    write5m: 0,
    write1h: 0,
    uncached: prompt.total - read,
    output,
  }
}
