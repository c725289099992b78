// What a list hands on about the one before it: a builder that rebuilt only past a prefix says how many of
// its leading items are the previous list's own objects, so the next stage of the pipeline compares only
// past that prefix instead of the whole list again (notes/2026-12-04-list-lineage.md).

/** A list's claim about the list its builder returned before it: `shared` leading items are the same. */
interface Lineage {
  base: readonly unknown[]
  shared: number
}

const lineages = new WeakMap<readonly unknown[], Lineage>()

/** Whether claims are read (tests turn it off to show the results do not depend on them). */
let reading = true

/**
 * Record that `list[i]` is `base[i]` for every `i < shared`. Both lists must be final: a builder calls
 * this where the list leaves it, and nothing writes either list afterwards. Only one step is kept: the
 * base's own claim is dropped, so a chain of lists does not keep every earlier list alive.
 */
export function builtFrom(
  list: readonly unknown[],
  base: readonly unknown[] | undefined,
  shared: number,
): void {
  if (base === undefined || base === list) return
  lineages.delete(base)
  const bound = Math.min(shared, list.length, base.length)
  if (bound > 0) lineages.set(list, { base, shared: bound })
}

/**
 * How many items of `list` from `from` on equal, by identity, `kept`'s from its start: `kept` is a stage's
 * own copy of the list it was given last time (`previous`, the very list), from the same `from`. A claim of
 * `list` about `previous` is taken on trust and only the rest is compared.
 */
export function identicalPrefix(
  list: readonly unknown[],
  kept: readonly unknown[],
  previous?: readonly unknown[],
  from = 0,
): number {
  const bound = Math.max(0, Math.min(list.length - from, kept.length))
  const lineage = reading && previous !== undefined ? lineages.get(list) : undefined
  let shared =
    lineage !== undefined && lineage.base === previous
      ? Math.max(0, Math.min(lineage.shared - from, bound))
      : 0
  while (shared < bound && list[from + shared] === kept[shared]) shared += 1
  return shared
}

/** Read claims or ignore them (tests compare both). */
export function readLineage(on: boolean): void {
  reading = on
}
