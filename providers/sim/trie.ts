// A prefix trie over prompt segments: a node per distinct prefix, keyed by segment identity. Walking a
// request through it costs one map lookup per segment, so a long session's cache is searched in time
// proportional to the request, not to the number of requests that came before.

import type { Prompt, Segment } from './types.ts'

/** A node: the prefix that ends with `segment`. */
export interface TrieNode<T> {
  readonly segment: Segment | undefined
  /** Segments from the root through this node. */
  readonly depth: number
  readonly parent: TrieNode<T> | undefined
  readonly children: Map<string, TrieNode<T>>
  /** The simulator's state for this prefix (entry lifetime, write time, …). */
  data: T | undefined
}

export class PrefixTrie<T> {
  readonly root: TrieNode<T> = {
    segment: undefined,
    depth: 0,
    parent: undefined,
    children: new Map(),
    data: undefined,
  }

  /** The nodes of the longest stored prefix of `prompt`, root excluded: `path[i]` holds segment i. */
  walk(prompt: Prompt, limit = prompt.segments.length): TrieNode<T>[] {
    const path: TrieNode<T>[] = []
    let node = this.root
    for (let index = 0; index < limit; index += 1) {
      const segment = prompt.segments[index]
      if (segment === undefined) break
      const child = node.children.get(segment.key)
      if (child === undefined) break
      path.push(child)
      node = child
    }
    return path
  }

  /** Store segments 0..count-1 of `prompt`, creating missing nodes; returns the full path. */
  insert(prompt: Prompt, count: number, create: (segment: Segment) => T): TrieNode<T>[] {
    const path: TrieNode<T>[] = []
    let node = this.root
    for (let index = 0; index < count; index += 1) {
      const segment = prompt.segments[index]
      if (segment === undefined) break
      let child = node.children.get(segment.key)
      if (child === undefined) {
        child = { segment, depth: index + 1, parent: node, children: new Map(), data: create(segment) }
        node.children.set(segment.key, child)
      }
      path.push(child)
      node = child
    }
    return path
  }

  /** Remove every subtree whose nodes all satisfy `dead`; returns how many nodes were removed. */
  prune(dead: (data: T | undefined) => boolean): number {
    let removed = 0
    const visit = (node: TrieNode<T>): boolean => {
      let allDead = dead(node.data)
      for (const [key, child] of node.children) {
        if (visit(child)) {
          node.children.delete(key)
          removed += countNodes(child)
        } else {
          allDead = false
        }
      }
      return allDead
    }
    for (const [key, child] of this.root.children) {
      if (visit(child)) {
        this.root.children.delete(key)
        removed += countNodes(child)
      }
    }
    return removed
  }
}

function countNodes<T>(node: TrieNode<T>): number {
  let count = 1
  for (const child of node.children.values()) count += countNodes(child)
  return count
}
