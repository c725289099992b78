import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../../harness/filler.ts'
import { SimulatorRejection } from '../sim/types.ts'
import { type LoopbackServer, startLoopback } from './loopback.ts'
import { type ChainedRequest, ResponsesStore } from './responses-store.ts'

let strict: LoopbackServer
let lenient: LoopbackServer
beforeAll(async () => {
  strict = await startLoopback({ upstream: 'sim', port: 0 })
  lenient = await startLoopback({ upstream: 'sim', port: 0, lenient: true })
})
afterAll(async () => {
  await strict.close()
  await lenient.close()
})

const client = (server: LoopbackServer) =>
  new OpenAI({ apiKey: 'cachelab-test-key', baseURL: server.baseURLs.openai, maxRetries: 0 })
type Params = OpenAI.Responses.ResponseCreateParamsNonStreaming

/** The API error the SDK threw for a request, or undefined when it was answered. */
async function refusal(server: LoopbackServer, params: Params) {
  return client(server)
    .responses.create(params)
    .then(
      () => undefined,
      (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
    )
}

describe('previous_response_id on the mock Responses API', () => {
  it('bills a chained request over the whole chain and reads its stored prefix from cache', async () => {
    const openai = client(strict)
    const opening = `Review this change. ${fillerText(3000, 'chain-opening')}`
    const first = await openai.responses.create({ model: 'gpt-5.4', input: opening })
    const second = await openai.responses.create({
      model: 'gpt-5.4',
      previous_response_id: first.id,
      input: 'And the tests?',
    })
    expect(second.previous_response_id).toBe(first.id)
    const firstInput = first.usage?.input_tokens ?? 0
    // The chain (the opening and the first reply) is input of the second request, and read from cache.
    expect(second.usage?.input_tokens).toBeGreaterThan(firstInput)
    expect(second.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(firstInput - 128)
    // Without the chain the same input is a few uncached tokens.
    const alone = await openai.responses.create({ model: 'gpt-5.4', input: 'And the tests?' })
    expect(alone.usage?.input_tokens).toBeLessThan(100)
    expect(alone.previous_response_id).toBeNull()
  })

  it('answers an id it never stored with the API 400, param and code', async () => {
    const thrown = await refusal(strict, {
      model: 'gpt-5.4',
      previous_response_id: 'resp_unknown',
      input: 'Hi',
    })
    expect(thrown).toBeInstanceOf(OpenAI.BadRequestError)
    expect(thrown?.error).toEqual({
      message: "Previous response with id 'resp_unknown' not found.",
      type: 'invalid_request_error',
      param: 'previous_response_id',
      code: 'previous_response_not_found',
    })
  })

  it('does not store a response whose request set store: false', async () => {
    const unstored = await client(strict).responses.create({ model: 'gpt-5.4', input: 'Hi', store: false })
    const thrown = await refusal(strict, {
      model: 'gpt-5.4',
      previous_response_id: unstored.id,
      input: 'Again',
    })
    expect(thrown?.error).toMatchObject({ code: 'previous_response_not_found' })
  })

  it('ignores an unknown id when lenient, echoing it', async () => {
    const response = await client(lenient).responses.create({
      model: 'gpt-5.4',
      previous_response_id: 'resp_unknown',
      input: 'Hi',
    })
    expect(response.previous_response_id).toBe('resp_unknown')
  })
})

describe('item_reference on the mock Responses API', () => {
  it('resolves a reference to a stored output item into the input it bills', async () => {
    const openai = client(strict)
    const first = await openai.responses.create({ model: 'gpt-5.4', input: 'Say something.' })
    const item = first.output[0]
    if (item?.id === undefined) throw new Error('no output item')
    const plain = await openai.responses.create({ model: 'gpt-5.4', input: 'Go on.' })
    const referenced = await openai.responses.create({
      model: 'gpt-5.4',
      input: [
        { type: 'item_reference', id: item.id },
        { role: 'user', content: 'Go on.' },
      ],
    })
    expect(referenced.usage?.input_tokens).toBeGreaterThan(plain.usage?.input_tokens ?? 0)
  })

  it("answers a reference to an item it does not hold with the API's 404", async () => {
    const input: Params['input'] = [{ type: 'item_reference', id: 'msg_unknown' }]
    const thrown = await refusal(strict, { model: 'gpt-5.4', input, store: false })
    expect(thrown).toBeInstanceOf(OpenAI.NotFoundError)
    expect(thrown?.error).toEqual({
      message:
        "Item with id 'msg_unknown' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
      type: 'invalid_request_error',
      param: 'input',
      code: null,
    })
    expect(await refusal(lenient, { model: 'gpt-5.4', input, store: false })).toBeUndefined()
  })
})

describe('ResponsesStore', () => {
  const request = (previous: string | undefined, text: string) => ({
    model: 'gpt-5.4',
    input: [{ role: 'user', content: text }],
    ...(previous !== undefined ? { previous_response_id: previous } : {}),
  })
  const chain = (store: ResponsesStore, body: Record<string, unknown>): ChainedRequest => {
    const chained = store.chain(body, true)
    if (chained instanceof SimulatorRejection) throw chained
    return chained
  }
  const reply = (id: string) => [{ id, type: 'message', role: 'assistant', content: [] }]

  it('rebuilds a chain oldest first: each input, then its output', () => {
    const store = new ResponsesStore()
    store.remember('resp_1', chain(store, request(undefined, 'one')), reply('msg_1'))
    store.remember('resp_2', chain(store, request('resp_1', 'two')), reply('msg_2'))
    const third = chain(store, request('resp_2', 'three'))
    expect(third.body.input).toEqual([
      { role: 'user', content: 'one' },
      ...reply('msg_1'),
      { role: 'user', content: 'two' },
      ...reply('msg_2'),
      { role: 'user', content: 'three' },
    ])
    expect(third.body).not.toHaveProperty('previous_response_id')
  })

  it('hands back the very body when there is nothing to chain or resolve', () => {
    const store = new ResponsesStore()
    const body = request(undefined, 'one')
    expect(chain(store, body).body).toBe(body)
  })

  it('forgets the oldest response beyond its capacity, and its items, while kept ones still reach their ancestors', () => {
    const store = new ResponsesStore(2)
    store.remember('resp_1', chain(store, request(undefined, 'one')), reply('msg_1'))
    store.remember('resp_2', chain(store, request('resp_1', 'two')), reply('msg_2'))
    store.remember('resp_3', chain(store, request('resp_2', 'three')), reply('msg_3'))
    expect(store.has('resp_1')).toBe(false)
    expect(store.chain(request('resp_1', 'again'), true)).toBeInstanceOf(SimulatorRejection)
    expect(store.chain({ input: [{ type: 'item_reference', id: 'msg_1' }] }, true)).toBeInstanceOf(
      SimulatorRejection,
    )
    expect(chain(store, request('resp_3', 'four')).body.input).toHaveLength(7)
  })
})
