import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CATALOG, type Vendor } from '../catalog.ts'
import { displayName, modelList } from './models.ts'
import { type MockProviders, startMockProviders } from './server.ts'

const catalogIds = (vendor: Vendor) =>
  CATALOG.filter((entry) => entry.vendor === vendor).map(({ model }) => model)
const query = (text: string) => new URLSearchParams(text)

describe('model names', () => {
  it('read as the vendor writes them: version numbers joined by a dot', () => {
    expect(displayName('claude-sonnet-4-6')).toBe('Claude Sonnet 4.6')
    expect(displayName('claude-opus-5')).toBe('Claude Opus 5')
  })
})

describe("Anthropic's model list pages", () => {
  const ids = catalogIds('anthropic')
  const page = (text: string) => modelList('anthropic', query(text)) as { body: Record<string, unknown> }
  const pageIds = (text: string) => (page(text).body.data as Array<{ id: string }>).map(({ id }) => id)

  it('hold every model by default, with the first and last id and nothing more', () => {
    expect(page('').body).toMatchObject({ has_more: false, first_id: ids[0], last_id: ids.at(-1) })
    expect(pageIds('')).toEqual(ids)
  })

  it('move forward after an id and back before one, saying whether more lie that way', () => {
    expect(pageIds('limit=2')).toEqual(ids.slice(0, 2))
    expect(page('limit=2').body.has_more).toBe(true)
    expect(pageIds(`limit=2&after_id=${ids[1]}`)).toEqual(ids.slice(2, 4))
    expect(pageIds(`limit=2&before_id=${ids[3]}`)).toEqual(ids.slice(1, 3))
    expect(page(`limit=2&before_id=${ids[3]}`).body.has_more).toBe(true)
    expect(page(`limit=2&before_id=${ids[2]}`).body.has_more).toBe(false)
  })

  it('are empty after an id the list does not hold, and refuse a limit out of range', () => {
    expect(page('after_id=claude-unknown').body).toMatchObject({ data: [], has_more: false, first_id: null })
    expect(modelList('anthropic', query('limit=0'))).toEqual({
      problem: 'limit: Input should be between 1 and 1000',
    })
  })
})

describe('model listings in process, on the real hosts', () => {
  let mocks: MockProviders
  beforeAll(() => {
    mocks = startMockProviders()
  })
  afterAll(() => mocks.close())

  it("give the openai SDK OpenAI's catalog models, and one by id", async () => {
    const client = new OpenAI({ apiKey: 'test', maxRetries: 0 })
    const listed: string[] = []
    for await (const model of client.models.list()) listed.push(model.id)
    expect(listed).toEqual(catalogIds('openai'))
    expect(await client.models.retrieve('gpt-5.4')).toEqual({
      id: 'gpt-5.4',
      object: 'model',
      created: 0,
      owned_by: 'system',
    })
  })

  it("give the Anthropic SDK every page of Anthropic's models", async () => {
    const client = new Anthropic({ apiKey: 'test', maxRetries: 0 })
    const listed: string[] = []
    for await (const model of client.models.list({ limit: 2 })) listed.push(model.id)
    expect(listed).toEqual(catalogIds('anthropic'))
    const model = await client.models.retrieve('claude-sonnet-4-6')
    expect(model).toMatchObject({ type: 'model', display_name: 'Claude Sonnet 4.6', lifecycle: 'active' })
  })

  it("give an OpenAI-compatible client DeepSeek's models, with and without /v1", async () => {
    for (const baseURL of ['https://api.deepseek.com', 'https://api.deepseek.com/v1']) {
      const page = await new OpenAI({ apiKey: 'test', baseURL, maxRetries: 0 }).models.list()
      expect(page.data).toEqual(
        catalogIds('deepseek').map((id) => ({ id, object: 'model', owned_by: 'deepseek' })),
      )
    }
  })

  it("answer an unknown model with the vendor's not-found error", async () => {
    await expect(new OpenAI({ apiKey: 'test', maxRetries: 0 }).models.retrieve('gpt-0')).rejects.toThrow(
      OpenAI.NotFoundError,
    )
    await expect(
      new Anthropic({ apiKey: 'test', maxRetries: 0 }).models.retrieve('claude-0'),
    ).rejects.toThrow(Anthropic.NotFoundError)
  })
})
