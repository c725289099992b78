// The Responses API's server-side state in the mocks: each stored response keeps its own input and its
// output items and points at the response it continued, so `previous_response_id` chains rebuild the whole
// conversation the model saw (and the API bills), and `item_reference` items resolve to the items held.
// Memory is bounded: the most recent STORED_RESPONSES responses can be named; an older id is forgotten
// (answered like an id never stored), though a kept response still reaches its ancestors' items.

import { isRecord } from '../../harness/json-fields.ts'
import type { SimulatorRejection } from '../sim/types.ts'
import { itemNotFound, previousResponseNotFound } from './validation/index.ts'

type Item = Record<string, unknown>

/** How many responses the store keeps nameable; the oldest is forgotten first. */
export const STORED_RESPONSES = 10_000

/** A stored response: the response it continued, its own input (references resolved), its output items. */
interface StoredResponse {
  parent: StoredResponse | undefined
  input: readonly Item[]
  output: readonly Item[]
}

/** A request read against the store: the body the model sees, and what storing its response needs. */
export interface ChainedRequest {
  /** The request with the chain's items before its own input and its item references resolved. */
  body: Record<string, unknown>
  parent: StoredResponse | undefined
  /** The request's own input items, references resolved. */
  input: readonly Item[]
}

/** A request's own input as items: a string input is one user message, as the API reads it. */
function inputItems(input: unknown): Item[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }]
  return Array.isArray(input) ? input.filter(isRecord) : []
}

/** Every item of a chain, oldest first: each ancestor's input, then its output. */
function chainItems(response: StoredResponse | undefined): Item[] {
  const links: StoredResponse[] = []
  for (let link = response; link !== undefined; link = link.parent) links.push(link)
  return links.reverse().flatMap((link) => [...link.input, ...link.output])
}

export class ResponsesStore {
  private readonly responses = new Map<string, StoredResponse>()
  /** Items of stored responses by id, with the response that holds them. */
  private readonly items = new Map<string, { item: Item; response: string }>()
  private readonly capacity: number

  constructor(capacity = STORED_RESPONSES) {
    this.capacity = capacity
  }

  /**
   * Read a request against the store. With `strict`, an unknown `previous_response_id` or unresolved
   * `item_reference` is the API's refusal; without it (lenient mocks) the id is ignored and the reference
   * passed on as sent, as the mocks did before they kept state.
   */
  chain(body: Record<string, unknown>, strict: boolean): ChainedRequest | SimulatorRejection {
    const previousId = typeof body.previous_response_id === 'string' ? body.previous_response_id : undefined
    const parent = previousId === undefined ? undefined : this.responses.get(previousId)
    if (previousId !== undefined && parent === undefined && strict)
      return previousResponseNotFound(previousId)
    let resolved = false
    const input: Item[] = []
    for (const item of inputItems(body.input)) {
      if (item.type !== 'item_reference' || typeof item.id !== 'string') {
        input.push(item)
        continue
      }
      const held = this.items.get(item.id)
      if (held === undefined && strict) return itemNotFound(item.id, body.store === false)
      input.push(held?.item ?? item)
      resolved ||= held !== undefined
    }
    if (parent === undefined && !resolved) return { body, parent, input }
    const { previous_response_id: _previous, ...rest } = body
    return { body: { ...rest, input: [...chainItems(parent), ...input] }, parent, input }
  }

  /** Store a response unless its request set `store: false`; forget the oldest beyond the capacity. */
  remember(id: string, request: ChainedRequest, output: readonly Item[]): void {
    if (request.body.store === false) return
    const response: StoredResponse = { parent: request.parent, input: request.input, output }
    this.responses.set(id, response)
    for (const item of [...request.input, ...output]) {
      if (typeof item.id === 'string') this.items.set(item.id, { item, response: id })
    }
    while (this.responses.size > this.capacity) {
      const oldest = this.responses.keys().next().value
      if (oldest === undefined) break
      this.forget(oldest)
    }
  }

  /** Whether a response id can be named. */
  has(id: string): boolean {
    return this.responses.has(id)
  }

  clear(): void {
    this.responses.clear()
    this.items.clear()
  }

  private forget(id: string): void {
    const response = this.responses.get(id)
    this.responses.delete(id)
    if (response === undefined) return
    for (const item of [...response.input, ...response.output]) {
      if (typeof item.id === 'string' && this.items.get(item.id)?.response === id) this.items.delete(item.id)
    }
  }
}
