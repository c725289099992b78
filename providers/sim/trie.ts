// A prefix trie over prompt segments: a node per distinct prefix. Children are keyed by the segment's
// text (a string the JSON parser or the linearizer already made, so no key is built per lookup) and told
// apart by frame. Walking a request costs one map lookup per segment, so a long session's cache is
// searched in time proportional to the request, not to the number of requests before it. A node with many
// children also keeps them sorted by tokens, so the child sharing the most tokens with a segment is found
// by binary search, not by comparing every sibling (thousands of sessions under one system prompt).

import { stringBytes } from './bytes.ts'
import { commonTokenPrefix } from './tokens.ts'
import type { Prompt, Segment, TrieMeter } from './types.ts'

/** A node: the prefix that ends with `segment`. */
export interface TrieNode<T> {
  readonly segment: Segment | undefined
  /** Segments from the root through this node. */
  readonly depth: number
  readonly parent: TrieNode<T> | undefined
  /** Children by segment text; segments with the same text and another frame share the entry. */
  readonly children: Map<string, Array<TrieNode<T>>>
  /** The simulator's state for this prefix (entry lifetime, write time, …). */
  data: T | undefined
  /**
   * The meter's tick of the latest request whose walk or insert ended at this node. The tick a node was
   * last used at (passed through) is the largest `used` in its subtree: a walk marks only its path's
   * last node, so that a request costs no pass over its whole path. `prune` and `bytesByUse` take the
   * largest over each subtree (and store it on the node); a node is never used later than its parent,
   * so evicting the nodes used before a tick removes whole subtrees.
   */
  used: number
  /** The children sorted by tokens, once there are enough of them to search rather than scan. */
  siblings?: SiblingIndex<T>
}

/** A node's children by frame, each frame's sorted by token sequence; new children wait in `pending`. */
interface SiblingIndex<T> {
  byFrame: Map<string, Array<IndexedChild<T>>>
  /** Children inserted since the index was last brought up to date (their tokens are not known yet). */
  pending: Array<TrieNode<T>>
}

interface IndexedChild<T> {
  tokens: ArrayLike<number>
  child: TrieNode<T>
}

/** Children a node holds before its siblings are indexed: below this a scan is as fast as a search. */
const INDEX_THRESHOLD = 16

/**
 * Estimated bytes of a node beyond its segment's strings: the node, its segment and wire-node objects, its
 * children map, the list and map entry in its parent, and the simulator's state object. Measured: 1,198
 * bytes a node under V8 (20,000 children of one node, a one-field state).
 */
const NODE_BYTES = 1_200

/** Estimated bytes a node holds for its segment (the text is the simulator's only reference once pruned). */
function nodeBytes(segment: Segment): number {
  return NODE_BYTES + stringBytes(segment.text) + stringBytes(segment.frame)
}

/** Whether two segments are the same prompt content (markers such as breakpoints do not count). */
export function sameSegment(left: Segment | undefined, right: Segment | undefined): boolean {
  return left !== undefined && right !== undefined && left.text === right.text && left.frame === right.frame
}

/**
 * How many leading segments of `prompt` are known, from `base` links alone, to be the very objects of
 * `segments` (whose own `base` is `segmentsBase`): the prompt is that array, or was built from it, or
 * both were built from one earlier array (a prompt and the same prompt extended by its answer).
 */
function identicalPrefix(prompt: Prompt, segments: readonly Segment[], segmentsBase: Prompt['base']): number {
  if (prompt.segments === segments) return segments.length
  const base = prompt.base
  if (base?.segments === segments) return base.count
  if (segmentsBase === undefined) return 0
  if (segmentsBase.segments === prompt.segments) return segmentsBase.count
  if (base?.segments === segmentsBase.segments) return Math.min(base.count, segmentsBase.count)
  return 0
}

/** Every child of a node. */
export function* childrenOf<T>(node: TrieNode<T>): Iterable<TrieNode<T>> {
  for (const list of node.children.values()) yield* list
}

function childFor<T>(node: TrieNode<T>, segment: Segment): TrieNode<T> | undefined {
  const list = node.children.get(segment.text)
  if (list === undefined) return undefined
  for (const child of list) if (child.segment?.frame === segment.frame) return child
  return undefined
}

export class PrefixTrie<T> {
  /** Estimated bytes of the nodes (and sibling indexes), added to the meter the trie was given. */
  private readonly meter: TrieMeter
  readonly root: TrieNode<T> = {
    segment: undefined,
    depth: 0,
    parent: undefined,
    children: new Map(),
    data: undefined,
    used: 0,
  }
  /** The last path walked or inserted and its segments: the next request of a session usually repeats it. */
  private cursor: {
    segments: readonly Segment[]
    base: Prompt['base']
    path: Array<TrieNode<T>>
  } = { segments: [], base: undefined, path: [] }

  /** `meter`: where the trie counts its estimated bytes (a fresh one of its own by default). */
  constructor(meter: TrieMeter = { bytes: 0 }) {
    this.meter = meter
  }

  /**
   * The nodes of the last path that `prompt` repeats, compared segment by segment (the same strings, so a
   * comparison is a pointer check): the shared prefix costs no map lookups.
   */
  private reuse(prompt: Prompt, limit: number): TrieNode<T>[] {
    const { segments, base, path } = this.cursor
    const bound = Math.min(limit, path.length, segments.length)
    // Segments the prompt took over from the remembered one are the same objects: no need to compare them.
    let index = Math.min(identicalPrefix(prompt, segments, base), bound)
    for (; index < bound; index += 1) {
      const current = prompt.segments[index]
      const previous = segments[index]
      if (current !== previous && !sameSegment(current, previous)) break
    }
    // Paths are never mutated once returned, so the remembered one is shared when wholly reused.
    return index === path.length ? path : path.slice(0, index)
  }

  private remember(prompt: Prompt, path: Array<TrieNode<T>>): void {
    this.cursor = { segments: prompt.segments, base: prompt.base, path }
  }

  /** The nodes of the longest stored prefix of `prompt`, root excluded: `path[i]` holds segment i. */
  walk(prompt: Prompt, limit = prompt.segments.length): TrieNode<T>[] {
    const reused = this.reuse(prompt, limit)
    const added: TrieNode<T>[] = []
    let node = reused.at(-1) ?? this.root
    for (let index = reused.length; index < limit; index += 1) {
      const segment = prompt.segments[index]
      if (segment === undefined) break
      const child = childFor(node, segment)
      if (child === undefined) break
      added.push(child)
      node = child
    }
    const path = added.length === 0 ? reused : reused.concat(added)
    // A partial path is remembered too when it is no shorter: the session's next call (the insert of
    // this prompt, or of it extended by its answer) then starts from it.
    if (path.length === limit || path.length >= this.cursor.path.length) this.remember(prompt, path)
    this.mark(path)
    return path
  }

  /**
   * Mark a path as used by the current request (least recently used nodes are evicted first): its last
   * node stands for the whole path (see `used`; ticks only grow, so the latest is the largest).
   */
  private mark(path: ReadonlyArray<TrieNode<T>>): void {
    const last = path.at(-1)
    if (last !== undefined) last.used = this.meter.tick ?? 0
  }

  /** Store segments 0..count-1 of `prompt`, creating missing nodes; returns the full path. */
  insert(prompt: Prompt, count: number, create: (segment: Segment) => T): TrieNode<T>[] {
    const reused = this.reuse(prompt, count)
    const added: TrieNode<T>[] = []
    let node = reused.at(-1) ?? this.root
    for (let index = reused.length; index < count; index += 1) {
      const segment = prompt.segments[index]
      if (segment === undefined) break
      let child = childFor(node, segment)
      if (child === undefined) {
        child = {
          segment,
          depth: index + 1,
          parent: node,
          children: new Map(),
          data: create(segment),
          used: 0,
        }
        const list = node.children.get(segment.text)
        if (list === undefined) node.children.set(segment.text, [child])
        else list.push(child)
        node.siblings?.pending.push(child)
        this.meter.bytes += nodeBytes(segment)
        this.meter.tries?.add(this as PrefixTrie<unknown>)
      }
      added.push(child)
      node = child
    }
    const path = added.length === 0 ? reused : reused.concat(added)
    this.remember(prompt, path)
    this.mark(path)
    return path
  }

  /**
   * The most tokens a child of `node` with `segment`'s frame shares with `segment`'s text, over the
   * children `accept` takes; undefined when it takes none. `tokens` gives a segment's text's tokens. A node with many
   * children answers from its sorted siblings: the accepted child nearest the segment on either side shares
   * the most (tokens sorted lexicographically share a longer prefix the closer they sit), so the cost does
   * not grow with the number of siblings, only with those `accept` turns down on the way.
   */
  longestShared(
    node: TrieNode<T>,
    segment: Segment,
    accept: (child: TrieNode<T>) => boolean,
    tokens: (segment: Segment) => ArrayLike<number>,
  ): number | undefined {
    if (countChildren(node) < INDEX_THRESHOLD) {
      let best: number | undefined
      for (const child of childrenOf(node)) {
        const stored = child.segment
        if (stored === undefined || stored.frame !== segment.frame || !accept(child)) continue
        const shared =
          stored.text === segment.text
            ? tokens(segment).length
            : commonTokenPrefix(tokens(stored), tokens(segment))
        best = Math.max(best ?? 0, shared)
      }
      return best
    }
    const sorted = this.indexed(node, tokens).byFrame.get(segment.frame)
    if (sorted === undefined) return undefined
    const wanted = tokens(segment)
    const position = insertionPoint(sorted, wanted)
    let best: number | undefined
    for (let index = position - 1; index >= 0; index -= 1) {
      const entry = sorted[index] as IndexedChild<T>
      if (!accept(entry.child)) continue
      best = commonTokenPrefix(entry.tokens, wanted)
      break
    }
    for (let index = position; index < sorted.length; index += 1) {
      const entry = sorted[index] as IndexedChild<T>
      if (!accept(entry.child)) continue
      best = Math.max(best ?? 0, commonTokenPrefix(entry.tokens, wanted))
      break
    }
    return best
  }

  /** The node's sibling index, built on first use and brought up to date with the children added since. */
  private indexed(node: TrieNode<T>, tokens: (segment: Segment) => ArrayLike<number>): SiblingIndex<T> {
    let index = node.siblings
    if (index === undefined) {
      index = { byFrame: new Map(), pending: [...childrenOf(node)] }
      node.siblings = index
    }
    for (const child of index.pending) {
      const segment = child.segment as Segment
      const entry = { tokens: tokens(segment), child }
      let sorted = index.byFrame.get(segment.frame)
      if (sorted === undefined) {
        sorted = []
        index.byFrame.set(segment.frame, sorted)
      }
      sorted.splice(insertionPoint(sorted, entry.tokens), 0, entry)
      this.meter.bytes += INDEX_ENTRY_BYTES + 4 * entry.tokens.length
    }
    index.pending = []
    return index
  }

  /** Estimated bytes of this trie's nodes and indexes (with the other tries on its meter). */
  get bytes(): number {
    return this.meter.bytes
  }

  /**
   * Remove every subtree whose nodes all satisfy `dead`, or were last used before the meter's
   * `evictBefore` (evicted for memory, least recently used first); returns how many nodes were removed.
   */
  prune(dead: (data: T | undefined) => boolean): number {
    let removed = 0
    const evictBefore = this.meter.evictBefore ?? Number.NEGATIVE_INFINITY
    // Children first: a node was last used when the latest walk through its subtree was (`used`), removed
    // children included, and keeps that tick.
    const visit = (node: TrieNode<T>): boolean => {
      let anyKept = false
      let dropped = false
      for (const [text, list] of node.children) {
        const kept = list.filter((child) => {
          const gone = visit(child)
          node.used = Math.max(node.used, child.used)
          if (!gone) return true
          removed += 1
          dropped = true
          this.meter.bytes -= nodeBytes(child.segment as Segment)
          if (!dead(child.data)) this.meter.evicted = (this.meter.evicted ?? 0) + 1
          return false
        })
        if (kept.length === 0) node.children.delete(text)
        else node.children.set(text, kept)
        if (kept.length > 0) anyKept = true
      }
      if (dropped && node.siblings !== undefined) this.dropIndex(node)
      return node !== this.root && !anyKept && (node.used < evictBefore || dead(node.data))
    }
    visit(this.root)
    this.cursor = { segments: [], base: undefined, path: [] }
    if (this.root.children.size === 0) this.meter.tries?.delete(this as PrefixTrie<unknown>)
    return removed
  }

  /** Add each node's estimated bytes to `into` under the tick it was last used at (eviction's survey). */
  bytesByUse(into: Map<number, number>): void {
    // Children first, to take each node's tick over its subtree (see `used`).
    const visit = (node: TrieNode<T>): void => {
      for (const child of childrenOf(node)) {
        visit(child)
        node.used = Math.max(node.used, child.used)
        into.set(child.used, (into.get(child.used) ?? 0) + nodeBytes(child.segment as Segment))
      }
    }
    visit(this.root)
  }

  /** Forget a node's sibling index (it is rebuilt from the remaining children when next searched). */
  private dropIndex(node: TrieNode<T>): void {
    for (const sorted of node.siblings?.byFrame.values() ?? [])
      for (const entry of sorted) this.meter.bytes -= INDEX_ENTRY_BYTES + 4 * entry.tokens.length
    delete node.siblings
  }
}

/** Estimated bytes of a sibling index entry beyond its tokens. */
const INDEX_ENTRY_BYTES = 64

function countChildren<T>(node: TrieNode<T>): number {
  if (node.siblings !== undefined) return INDEX_THRESHOLD
  let count = 0
  for (const list of node.children.values()) {
    count += list.length
    if (count >= INDEX_THRESHOLD) break
  }
  return count
}

/** Where `tokens` sorts among `sorted` (lexicographic order, a prefix first): the first entry not before it. */
function insertionPoint<T>(sorted: ReadonlyArray<IndexedChild<T>>, tokens: ArrayLike<number>): number {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (compareTokens((sorted[middle] as IndexedChild<T>).tokens, tokens) < 0) low = middle + 1
    else high = middle
  }
  return low
}

function compareTokens(left: ArrayLike<number>, right: ArrayLike<number>): number {
  const shared = commonTokenPrefix(left, right)
  if (shared < left.length && shared < right.length)
    return (left[shared] as number) - (right[shared] as number)
  return left.length - right.length
}
