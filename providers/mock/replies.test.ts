// Answers with range over real HTTP, as `cachelab serve` gives them, asserted through the official SDKs:
// an agent's tool loop runs against the default answer with no cachelab header, and a replies file's
// session yields reasoning on each vendor's wire and a cut answer with the API's stop reason where asked.

import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CaptureTracker } from '../../reports/observed/capture/tracker.ts'
import { CacheSimulators } from '../sim/index.ts'
import { thinkingSignature } from './anthropic.ts'
import { type LoopbackServer, startLoopback } from './loopback.ts'
import { repliesFromRules } from './reply-file.ts'
import { SESSION_HEADER } from './script.ts'

const KEY = 'cachelab-replies-test-key'
let server: LoopbackServer

beforeAll(async () => {
  const linearizer = new CacheSimulators()
  server = await startLoopback({
    upstream: 'sim',
    port: 0,
    // As `serve` runs it: sessions told apart, so replies go by session.
    capture: new CaptureTracker({ linearize: (api, body) => linearizer.linearize(api, body) }),
    replies: repliesFromRules([
      { session: 'reasoning', turn: 1, text: { tokens: 20 }, reasoning: 64 },
      { session: 'reasoning', turn: 2, text: { tokens: 500 } },
      { session: 'reasoning', turn: 3, text: 'Redacted.', reasoning: { tokens: 16, redacted: true } },
    ]),
  })
})
afterAll(() => server.close())

const openai = () => new OpenAI({ apiKey: KEY, baseURL: server.baseURLs.openai, maxRetries: 0 })
const deepseek = () => new OpenAI({ apiKey: KEY, baseURL: server.baseURLs.deepseek, maxRetries: 0 })
const anthropic = () => new Anthropic({ apiKey: KEY, baseURL: server.baseURLs.anthropic, maxRetries: 0 })
const inSession = { headers: { [SESSION_HEADER]: 'reasoning' } }

const readFile: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'read_file',
    description: 'Read a file of the project.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
}

/** The user's agent: call the model, run each tool it calls, until it answers without one. */
async function chatAgent(stream: boolean) {
  const client = openai()
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'You answer questions about a project. Read files when you need to.' },
    { role: 'user', content: 'What does README.md say?' },
  ]
  const ran: Array<{ name: string; arguments: unknown }> = []
  for (let step = 1; step <= 5; step += 1) {
    const params = { model: 'gpt-5.4', messages, tools: [readFile] }
    const completion = stream
      ? await client.chat.completions.stream(params).finalChatCompletion()
      : await client.chat.completions.create(params)
    const message = completion.choices[0]?.message
    if (message === undefined) throw new Error('no choice')
    messages.push(message)
    const calls = (message.tool_calls ?? []).filter((call) => call.type === 'function')
    if (calls.length === 0)
      return { steps: step, answer: message.content, ran, finish: completion.choices[0]?.finish_reason }
    for (const call of calls) {
      ran.push({ name: call.function.name, arguments: JSON.parse(call.function.arguments) })
      messages.push({ role: 'tool', tool_call_id: call.id, content: '# cachelab\nA prompt-cache harness.' })
    }
  }
  throw new Error('the agent did not finish in five steps')
}

/** The same agent on the Responses API. */
async function responsesAgent(stream: boolean) {
  const client = openai()
  const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'What does README.md say?' }]
  const tools: OpenAI.Responses.Tool[] = [
    {
      type: 'function',
      name: 'read_file',
      strict: false,
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  ]
  const ran: string[] = []
  for (let step = 1; step <= 5; step += 1) {
    const params = { model: 'gpt-5.4', input, tools }
    const response = stream
      ? await client.responses.stream(params).finalResponse()
      : await client.responses.create(params)
    input.push(...(response.output as OpenAI.Responses.ResponseInputItem[]))
    const calls: Array<{ name: string; call_id: string }> = []
    for (const item of response.output) if (item.type === 'function_call') calls.push(item)
    if (calls.length === 0) return { steps: step, answer: response.output_text, ran }
    for (const call of calls) {
      ran.push(call.name)
      input.push({ type: 'function_call_output', call_id: call.call_id, output: 'A prompt-cache harness.' })
    }
  }
  throw new Error('the agent did not finish in five steps')
}

describe.each([false, true])(
  'an agent on the official openai SDK, no cachelab header (streamed: %s)',
  (stream) => {
    it('completes a tool round trip on Chat Completions: the declared tool once, then a text answer', async () => {
      const result = await chatAgent(stream)
      expect(result.ran).toEqual([{ name: 'read_file', arguments: { path: 'README.md' } }])
      expect(result).toMatchObject({ steps: 2, answer: 'OK.', finish: 'stop' })
    })

    it('completes a tool round trip on the Responses API', async () => {
      expect(await responsesAgent(stream)).toEqual({ steps: 2, answer: 'OK.', ran: ['read_file'] })
    })
  },
)

/** Turn 1 and turn 2 of the scripted session, as Chat messages. */
const turns = (answer: string) => ({
  one: [{ role: 'user' as const, content: 'Plan the release.' }],
  two: [
    { role: 'user' as const, content: 'Plan the release.' },
    { role: 'assistant' as const, content: answer },
    { role: 'user' as const, content: 'Now write the notes.' },
  ],
})

/** A Chat Completion, or the one a stream adds up to, with DeepSeek's reasoning deltas joined. */
async function chat(client: OpenAI, params: Record<string, unknown>, stream: boolean) {
  if (!stream) {
    const completion = (await client.chat.completions.create(
      params as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
      inSession,
    )) as OpenAI.Chat.ChatCompletion
    const message = completion.choices[0]?.message as { content: string | null; reasoning_content?: string }
    return {
      content: message.content ?? '',
      reasoning: message.reasoning_content,
      finish: completion.choices[0]?.finish_reason,
      usage: completion.usage,
    }
  }
  const chunks = await client.chat.completions.create(
    {
      ...(params as unknown as OpenAI.Chat.ChatCompletionCreateParamsStreaming),
      stream: true,
      stream_options: { include_usage: true },
    },
    inSession,
  )
  let content = ''
  let reasoning: string | undefined
  let finish: string | null | undefined
  let usage: OpenAI.CompletionUsage | undefined
  for await (const chunk of chunks) {
    const delta = chunk.choices[0]?.delta as
      | { content?: string | null; reasoning_content?: string }
      | undefined
    content += delta?.content ?? ''
    if (delta?.reasoning_content !== undefined) reasoning = (reasoning ?? '') + delta.reasoning_content
    finish = chunk.choices[0]?.finish_reason ?? finish
    usage = chunk.usage ?? usage
  }
  return { content, reasoning, finish, usage }
}

describe.each([false, true])('a scripted session (streamed: %s)', (stream) => {
  it('OpenAI Chat: reasoning tokens in usage, none on the wire; a length stop at the cap', async () => {
    const one = await chat(openai(), { model: 'gpt-5.4', messages: turns('').one }, stream)
    expect(one.reasoning).toBeUndefined()
    expect(one.usage?.completion_tokens_details?.reasoning_tokens).toBe(64)
    expect(one.usage?.completion_tokens).toBe(84)
    const two = await chat(
      openai(),
      { model: 'gpt-5.4', messages: turns(one.content).two, max_completion_tokens: 50 },
      stream,
    )
    expect(two.finish).toBe('length')
    expect(two.usage?.completion_tokens).toBe(50)
    expect(two.content.length).toBeGreaterThan(0)
  })

  it('DeepSeek: reasoning_content in the message or its deltas, its tokens in usage; a length stop at the cap', async () => {
    const one = await chat(deepseek(), { model: 'deepseek-flash', messages: turns('').one }, stream)
    expect(one.reasoning?.trim().split(/\s+/).length).toBeGreaterThan(40)
    expect(one.usage?.completion_tokens_details?.reasoning_tokens).toBe(64)
    const two = await chat(
      deepseek(),
      { model: 'deepseek-flash', messages: turns(one.content).two, max_tokens: 50 },
      stream,
    )
    expect(two.finish).toBe('length')
    expect(two.usage?.completion_tokens).toBe(50)
  })

  it('Anthropic: a signed thinking block, a redacted one where scripted, its tokens in output_tokens; max_tokens stops', async () => {
    const client = anthropic()
    const ask = async (params: Anthropic.MessageCreateParamsNonStreaming) =>
      stream
        ? client.messages.stream(params, inSession).finalMessage()
        : client.messages.create(params, inSession)
    const thinking = { type: 'enabled' as const, budget_tokens: 1024 }
    const one = await ask({ model: 'claude-sonnet-4-6', max_tokens: 4096, thinking, messages: turns('').one })
    const [first, second] = one.content
    expect(first?.type).toBe('thinking')
    if (first?.type !== 'thinking') throw new Error('no thinking block')
    expect(first.signature).toBe(thinkingSignature(first.thinking))
    expect(second?.type).toBe('text')
    expect(one.usage.output_tokens).toBe(84)
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: 'Plan the release.' },
      { role: 'assistant', content: one.content.map((block) => block as Anthropic.ContentBlockParam) },
      { role: 'user', content: 'Now write the notes.' },
    ]
    const two = await ask({ model: 'claude-sonnet-4-6', max_tokens: 50, messages: history })
    expect(two.stop_reason).toBe('max_tokens')
    expect(two.usage.output_tokens).toBe(50)
    const three = await ask({
      model: 'claude-sonnet-4-6',
      max_tokens: 4096,
      thinking,
      messages: [
        ...history,
        { role: 'assistant', content: 'Notes.' },
        { role: 'user', content: 'Anything hidden?' },
      ],
    })
    expect(three.content[0]?.type).toBe('redacted_thinking')
  })

  it('Responses: a reasoning item with encrypted content when asked, its tokens in usage; incomplete at the cap', async () => {
    const client = openai()
    const ask = async (params: Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'stream'>) =>
      stream
        ? client.responses.stream(params, inSession).finalResponse()
        : client.responses.create(params, inSession)
    const one = await ask({
      model: 'gpt-5.4',
      input: 'Plan the release.',
      reasoning: { effort: 'low', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
    })
    const reasoning = one.output[0]
    expect(reasoning?.type).toBe('reasoning')
    if (reasoning?.type !== 'reasoning') throw new Error('no reasoning item')
    expect(reasoning.encrypted_content).toEqual(expect.any(String))
    expect(reasoning.summary[0]?.text.length).toBeGreaterThan(0)
    expect(one.usage?.output_tokens_details.reasoning_tokens).toBe(64)
    const two = await ask({
      model: 'gpt-5.4',
      input: [
        { role: 'user', content: 'Plan the release.' },
        ...(one.output as OpenAI.Responses.ResponseInputItem[]),
        { role: 'user', content: 'Now write the notes.' },
      ],
      max_output_tokens: 50,
    })
    expect(two.status).toBe('incomplete')
    expect(two.incomplete_details?.reason).toBe('max_output_tokens')
    expect(two.usage?.output_tokens).toBe(50)
  })
})
