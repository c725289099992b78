// A prefix trie over prompt segments: a node per distinct prefix. Children are keyed by the segment's
// text (a string the JSON parser or the linearizer already made, so no key is built per lookup) and told
// apart by frame. Walking a request costs one map lookup per segment, so a long session's cache is
// searched in time proportional to the request, not to the number of requests before it.

import type { Prompt, Segment } from './types.ts'

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
}

/** Whether two segments are the same prompt content (markers such as breakpoints do not count). */
export function sameSegment(left: Segment | undefined, right: Segment | undefined): boolean {
  return left !== undefined && right !== undefined && left.text === right.text && left.frame === right.frame
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
  readonly root: TrieNode<T> = {
    segment: undefined,
    depth: 0,
    parent: undefined,
    children: new Map(),
    data: undefined,
  }
  /** The last path walked or inserted and its segments: the next request of a session usually repeats it. */
  private cursor: { segments: readonly Segment[]; path: Array<TrieNode<T>> } = { segments: [], path: [] }

  /**
   * The nodes of the last path that `prompt` repeats, compared segment by segment (the same strings, so a
   * comparison is a pointer check): the shared prefix costs no map lookups.
   */
  private reuse(prompt: Prompt, limit: number): TrieNode<T>[] {
    const { segments, path } = this.cursor
    const bound = Math.min(limit, path.length, segments.length)
    // Segments the prompt took over from the remembered one are the same objects: no need to compare them.
    let index =
      prompt.segments === segments
        ? bound
        : prompt.base?.segments === segments
          ? Math.min(prompt.base.count, bound)
          : 0
    for (; index < bound; index += 1) {
      const current = prompt.segments[index]
      const previous = segments[index]
      if (current !== previous && !sameSegment(current, previous)) break
    }
    // Paths are never mutated once returned, so the remembered one is shared when wholly reused.
    return index === path.length ? path : path.slice(0, index)
  }

  private remember(prompt: Prompt, path: Array<TrieNode<T>>): void {
    this.cursor = { segments: prompt.segments, path }
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
    if (path.length === limit) this.remember(prompt, path)
    return path
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
        child = { segment, depth: index + 1, parent: node, children: new Map(), data: create(segment) }
        const list = node.children.get(segment.text)
        if (list === undefined) node.children.set(segment.text, [child])
        else list.push(child)
      }
      added.push(child)
      node = child
    }
    const path = added.length === 0 ? reused : reused.concat(added)
    this.remember(prompt, path)
    return path
  }

  /** Remove every subtree whose nodes all satisfy `dead`; returns how many nodes were removed. */
  prune(dead: (data: T | undefined) => boolean): number {
    let removed = 0
    const visit = (node: TrieNode<T>): boolean => {
      let allDead = node !== this.root && dead(node.data)
      for (const [text, list] of node.children) {
        const kept = list.filter((child) => {
          if (!visit(child)) return true
          removed += 1
          return false
        })
        if (kept.length === 0) node.children.delete(text)
        else node.children.set(text, kept)
        if (kept.length > 0) allDead = false
      }
      return allDead
    }
    visit(this.root)
    this.cursor = { segments: [], path: [] }
    return removed
  }
}
