import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GEMINI_MODELS } from '../../catalog.ts'
import { type LoopbackServer, startLoopback } from '../loopback.ts'

// Raw bodies against two servers, one that refuses what the API refuses and one started lenient: the
// SDK drops fields it does not know (`thought_signature`), so these requests go out as written.
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

type Part = Record<string, unknown>
type Content = { role: string; parts: Part[] }

/** The status and body of a `generateContent` request. */
async function send(server: LoopbackServer, model: string, body: Record<string, unknown>) {
  const response = await fetch(`${server.baseURLs.gemini}/v1beta/models/${model}:generateContent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': 'cachelab-test-key' },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const SIGNATURE = 'CiQBjz1rX2NhY2hlbGFiLXRlc3Qtc2lnbmF0dXJlLTAxMjM0NTY3'
const user = (text: string): Content => ({ role: 'user', parts: [{ text }] })
const call = (name: string, signature?: string, key = 'thoughtSignature'): Part => ({
  functionCall: { name, args: {} },
  ...(signature !== undefined ? { [key]: signature } : {}),
})
const model = (...parts: Part[]): Content => ({ role: 'model', parts })
const results = (...names: string[]): Content => ({
  role: 'user',
  parts: names.map((name) => ({ functionResponse: { name, response: { output: 'ok' } } })),
})

/** The refusal of an unsigned call: the Gemini API's wording, naming the call and its content's position. */
const missingSignature = (name: string, position: number) =>
  `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`

const GEMINI_3 = 'gemini-3.8-flash'

const REFUSED: Array<{ rule: string; model: string; contents: Content[]; extra?: object; message: string }> =
  [
    {
      rule: 'a role other than user and model',
      model: 'gemini-2.5-flash',
      contents: [{ role: 'assistant', parts: [{ text: 'Hi' }] }],
      message: 'Please use a valid role: user, model.',
    },
    {
      rule: 'parallel calls answered by fewer function responses',
      model: 'gemini-2.5-flash',
      contents: [user('go'), model(call('a'), call('b')), results('a')],
      message:
        'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
    },
    {
      rule: 'a thinking budget of 0 on a model that only thinks',
      model: 'gemini-2.5-pro',
      contents: [user('go')],
      extra: { generationConfig: { thinkingConfig: { thinkingBudget: 0 } } },
      message: 'Budget 0 is invalid. This model only works in thinking mode.',
    },
    {
      rule: 'an unsigned function call in the current turn of a Gemini 3 model',
      model: GEMINI_3,
      contents: [user('Read it.'), model(call('read_file')), results('read_file')],
      message: missingSignature('read_file', 2),
    },
    {
      rule: 'an unsigned second step after a signed first one',
      model: 'gemini-3.1-pro-preview',
      contents: [
        user('Read both.'),
        model(call('read_file', SIGNATURE)),
        results('read_file'),
        model(call('grep')),
        results('grep'),
      ],
      message: missingSignature('grep', 4),
    },
    {
      rule: 'parallel calls whose first is unsigned (the signature on the second)',
      model: 'gemini-3-flash-preview',
      contents: [user('Both.'), model(call('a'), call('b', SIGNATURE)), results('a', 'b')],
      message: missingSignature('a', 2),
    },
  ]

describe('the Gemini mock refuses what its API refuses', () => {
  for (const { rule, model: name, contents, extra, message } of REFUSED) {
    it(`answers ${rule} with Google's 400 INVALID_ARGUMENT`, async () => {
      const answer = await send(strict, name, { contents, ...extra })
      expect(answer).toEqual({
        status: 400,
        body: { error: { code: 400, message, status: 'INVALID_ARGUMENT' } },
      })
    })

    it(`accepts ${rule} when lenient`, async () => {
      expect((await send(lenient, name, { contents, ...extra })).status).toBe(200)
    })
  }
})

const ACCEPTED: Array<{ case: string; model: string; contents: Content[] }> = [
  {
    case: 'a signed call, and parallel calls with the signature on the first only',
    model: GEMINI_3,
    contents: [user('Both.'), model(call('a', SIGNATURE), call('b')), results('a', 'b')],
  },
  {
    case: 'the signature under its proto name, thought_signature',
    model: GEMINI_3,
    contents: [
      user('Read it.'),
      model(call('read_file', SIGNATURE, 'thought_signature')),
      results('read_file'),
    ],
  },
  {
    case: 'the sentinel skip_thought_signature_validator (what Gemini CLI sends)',
    model: GEMINI_3,
    contents: [
      user('Read it.'),
      model(call('read_file', 'skip_thought_signature_validator')),
      results('read_file'),
    ],
  },
  {
    case: 'the sentinel context_engineering_is_the_way_to_go',
    model: 'gemini-3.5-flash-lite',
    contents: [
      user('Read it.'),
      model(call('read_file', 'context_engineering_is_the_way_to_go')),
      results('read_file'),
    ],
  },
  {
    case: 'unsigned calls in an earlier turn (only the current turn is validated)',
    model: 'gemini-3.5-flash',
    contents: [
      user('Read it.'),
      model(call('read_file')),
      results('read_file'),
      model({ text: 'Done.' }),
      user('Next.'),
    ],
  },
  {
    case: 'an unsigned call on Gemini 2.5, whose signatures are optional',
    model: 'gemini-2.5-flash',
    contents: [user('Read it.'), model(call('read_file')), results('read_file')],
  },
  {
    case: "a step the SDK's chat kept as one content per streamed chunk (the signature on the first call)",
    model: GEMINI_3,
    contents: [
      user('Both.'),
      model({ text: 'Reading.' }),
      model(call('a', SIGNATURE)),
      model(call('b')),
      results('a', 'b'),
    ],
  },
]

describe('the Gemini mock serves what its API serves', () => {
  for (const { case: name, model: modelName, contents } of ACCEPTED) {
    it(`serves ${name}`, async () => {
      const answer = await send(strict, modelName, { contents })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    })
  }
})

describe('which Gemini models validate signatures', () => {
  it('refuses an unsigned current turn on every Gemini 3 model of the catalog, a stand-in for one too, and on no 2.5 model', async () => {
    const unsigned = { contents: [user('Read it.'), model(call('read_file')), results('read_file')] }
    const models = [...GEMINI_MODELS.map((entry) => entry.model), 'gemini-3-pro-preview']
    const statuses = Object.fromEntries(
      await Promise.all(models.map(async (name) => [name, (await send(strict, name, unsigned)).status])),
    )
    expect(statuses).toEqual({
      'gemini-2.5-flash': 200,
      'gemini-2.5-pro': 200,
      'gemini-3.5-flash': 400,
      'gemini-3.1-pro-preview': 400,
      'gemini-3.5-flash-lite': 400,
      'gemini-3.8-flash': 400,
      'gemini-3-flash-preview': 400,
      'gemini-3-pro-preview': 400,
    })
  })
})
