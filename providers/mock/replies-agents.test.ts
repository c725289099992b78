// Answers agents can use, over real HTTP as `cachelab serve` gives them, asserted through the official
// SDKs: the tools Codex CLI declares inside namespaces are called by namespace and name, a rule calling a
// tool applies only where the tool is declared (side requests get text, never a 400), the default reads
// instead of spawning an agent, and a structured-output request gets JSON its schema accepts.

import Anthropic from '@anthropic-ai/sdk'
import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime'
import { GoogleGenAI } from '@google/genai'
import { NodeHttpHandler } from '@smithy/node-http-handler'
import ajvModule from 'ajv/dist/2020.js'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LoopbackServer, startLoopback } from './loopback.ts'
import { repliesFromRules } from './reply-file.ts'

const KEY = 'cachelab-replies-agents-key'
let server: LoopbackServer

beforeAll(async () => {
  server = await startLoopback({
    upstream: 'sim',
    port: 0,
    replies: repliesFromRules([
      {
        user: 'Delegate',
        turn: 1,
        step: 1,
        tools: [{ name: 'spawn_agent', arguments: { task_name: 'review' } }],
      },
      { session: '*', turn: 1, step: 1, tools: [{ name: 'Read', arguments: { file_path: 'README.md' } }] },
      { system: 'Generate a title', text: 'Fix the login bug' },
    ]),
  })
})
afterAll(() => server.close())

const openai = () => new OpenAI({ apiKey: KEY, baseURL: server.baseURLs.openai, maxRetries: 0 })
const anthropic = () => new Anthropic({ apiKey: KEY, baseURL: server.baseURLs.anthropic, maxRetries: 0 })
const ajv = new ajvModule.default({ strict: false })
const fn = (name: string, properties: Record<string, unknown> = {}, required: string[] = []) => ({
  type: 'function' as const,
  name,
  strict: false,
  parameters: { type: 'object', properties, required, additionalProperties: false },
})

/** Codex CLI 0.169's request: its tools in an `additional_tools` item, grouped in namespaces. */
function codexRequest(prompt: string): Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'stream'> {
  return {
    model: 'gpt-5.4',
    input: [
      {
        type: 'additional_tools',
        role: 'developer',
        tools: [
          {
            type: 'namespace',
            name: 'functions',
            description: '',
            tools: [fn('wait', { cell_id: { type: 'string' } }, ['cell_id'])],
          },
          {
            type: 'namespace',
            name: 'collaboration',
            description: '',
            tools: [
              fn('spawn_agent', { task_name: { type: 'string' }, message: { type: 'string' } }, [
                'task_name',
              ]),
            ],
          },
        ],
      },
      { role: 'developer', content: 'You are Codex.' },
      { role: 'user', content: prompt },
    ],
  }
}

describe.each([false, true])('Codex CLI on the Responses API (streamed: %s)', (stream) => {
  const ask = async (params: Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'stream'>) =>
    stream ? openai().responses.stream(params).finalResponse() : openai().responses.create(params)

  it('gets a call of a namespaced tool by its namespace and name, where a rule calls it', async () => {
    const response = await ask(codexRequest('Delegate the review.'))
    expect(response.output.filter((item) => item.type === 'function_call')).toMatchObject([
      {
        type: 'function_call',
        namespace: 'collaboration',
        name: 'spawn_agent',
        arguments: '{"task_name":"review"}',
      },
    ])
  })

  it('gets, by default, a call of a tool that does not start an agent', async () => {
    const response = await ask(codexRequest('List the files.'))
    const calls = response.output.filter((item) => item.type === 'function_call')
    expect(calls).toMatchObject([
      { namespace: 'functions', name: 'wait', arguments: '{"cell_id":"example cell_id"}' },
    ])
  })
})

describe('Claude Code on the Messages API', () => {
  const tools: Anthropic.Tool[] = ['Agent', 'Bash', 'Read'].map((name) => ({
    name,
    input_schema: {
      type: 'object',
      properties: name === 'Read' ? { file_path: { type: 'string' } } : { prompt: { type: 'string' } },
      required: name === 'Read' ? ['file_path'] : ['prompt'],
    },
  }))

  it('gets the rule’s Read where it declares Read, and the title where a side request declares no tools', async () => {
    const main = await anthropic().messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 1024,
      tools,
      messages: [{ role: 'user', content: 'What does README.md say?' }],
    })
    expect(main.content).toMatchObject([
      { type: 'tool_use', name: 'Read', input: { file_path: 'README.md' } },
    ])
    // The title generator: its own system prompt, no tools; the `Read` rule cannot apply to it.
    const title = await anthropic().messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 64,
      system: 'Generate a title for the conversation.',
      messages: [{ role: 'user', content: 'What does README.md say?' }],
    })
    expect(title.content).toEqual([{ type: 'text', text: 'Fix the login bug' }])
    const other = await anthropic().messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Summarize.' }],
    })
    expect(other.content).toEqual([{ type: 'text', text: 'OK.' }])
  })
})

const router = {
  type: 'object',
  properties: {
    reasoning: { type: 'string' },
    model_choice: { type: 'string', enum: ['flash', 'pro'] },
  },
  required: ['reasoning', 'model_choice'],
  additionalProperties: false,
}
/** Whether a text is JSON the router schema accepts. */
const routes = (text: string) => ajv.validate(router, JSON.parse(text))

describe('a structured-output request', () => {
  it('gets JSON valid against its schema on Chat Completions, and an object for json_object', async () => {
    const completion = await openai().chat.completions.create({
      model: 'gpt-5.4',
      messages: [{ role: 'user', content: 'Route this.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'route', schema: router, strict: true } },
    })
    expect(routes(completion.choices[0]?.message.content ?? '')).toBe(true)
    const object = await openai().chat.completions.create({
      model: 'gpt-5.4',
      messages: [{ role: 'user', content: 'Anything, as JSON.' }],
      response_format: { type: 'json_object' },
    })
    expect(JSON.parse(object.choices[0]?.message.content ?? '')).toEqual({})
  })

  it('gets JSON valid against its schema on Responses, its format echoed', async () => {
    const response = await openai().responses.create({
      model: 'gpt-5.4',
      input: 'Route this.',
      text: { format: { type: 'json_schema', name: 'route', schema: router, strict: true } },
    })
    expect(routes(response.output_text)).toBe(true)
    expect(response.text?.format).toMatchObject({ type: 'json_schema', name: 'route' })
  })

  it('gets JSON valid against its schema on the Messages API', async () => {
    const message = await anthropic().messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Route this.' }],
      output_config: { format: { type: 'json_schema', schema: router } },
    })
    const block = message.content[0]
    expect(block?.type === 'text' && routes(block.text)).toBe(true)
  })

  it('gets JSON of Gemini CLI’s router schema, upper-case types and all, on generateContent', async () => {
    const client = new GoogleGenAI({
      apiKey: 'AIzaSy-test',
      httpOptions: { baseUrl: server.baseURLs.gemini },
    })
    const response = await client.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'Route this.',
      config: {
        responseMimeType: 'application/json',
        responseSchema: {
          type: 'OBJECT' as never,
          properties: {
            reasoning: { type: 'STRING' as never },
            model_choice: { type: 'STRING' as never, enum: ['flash', 'pro'] },
          },
          required: ['reasoning', 'model_choice'],
        },
      },
    })
    expect(JSON.parse(response.text ?? '')).toEqual({ reasoning: 'example reasoning', model_choice: 'flash' })
  })

  it('gets JSON valid against its schema on Converse', async () => {
    const client = new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: server.baseURLs.bedrock,
      credentials: { accessKeyId: 'AKIAPLACEHOLDER', secretAccessKey: 'placeholder-secret' },
      requestHandler: new NodeHttpHandler(),
    })
    const output = await client.send(
      new ConverseCommand({
        modelId: 'anthropic.claude-sonnet-4-6',
        messages: [{ role: 'user', content: [{ text: 'Route this.' }] }],
        outputConfig: {
          textFormat: {
            type: 'json_schema',
            structure: { jsonSchema: { name: 'route', schema: JSON.stringify(router) } },
          },
        },
      }),
    )
    expect(routes(output.output?.message?.content?.[0]?.text ?? '')).toBe(true)
    client.destroy()
  })
})
