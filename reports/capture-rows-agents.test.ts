// The newest agents' cases, sent over HTTP to a loopback serve as the agents send them (bodies shaped
// after recordings of Claude Code 2.1.337, Codex 0.171.0 and Gemini CLI 0.61.0, their prompts replaced by
// stand-ins): each request placed in its conversation, and the break named and priced as the provider
// bills it. See notes/2026-12-07-agents-newest-cases.md.

import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { fillerText } from '../harness/filler.ts'
import { type LoopbackServer, startLoopback } from '../providers/mock/loopback.ts'
import { CacheSimulators } from '../providers/sim/index.ts'
import type { CapturedExchange } from '../providers/wire/exchange.ts'
import { breakLine, breaksOf } from './breaks.ts'
import { captureRows } from './capture-rows.ts'
import { CaptureTracker } from './observed/capture/tracker.ts'
import { countText } from './text-table.ts'
import type { StepRow } from './types.ts'

type Body = Record<string, unknown>

let server: LoopbackServer
let exchanges: CapturedExchange[]

beforeEach(async () => {
  exchanges = []
  const linearizer = new CacheSimulators()
  const tracker = new CaptureTracker({
    linearize: (api, body) => linearizer.linearize(api, body),
    sink: (exchange) => exchanges.push(exchange),
  })
  server = await startLoopback({ upstream: 'sim', port: 0, capture: tracker })
})

afterEach(() => server.close())

async function send(path: string, body: Body, headers: Record<string, string>): Promise<void> {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'test-key', ...headers },
    body: JSON.stringify(body),
  })
  expect(response.status, await response.text()).toBe(200)
}

const rows = (): StepRow[] => captureRows(exchanges, { runId: 'r', scenario: 'agents' })
const text = (value: string, marked = false) => ({
  type: 'text',
  text: value,
  ...(marked ? { cache_control: { type: 'ephemeral' } } : {}),
})

describe('Claude Code 2.1.337', () => {
  const session = '66e3595d-2e6a-4abb-b43b-c7fc4b4acd47'
  const headers = {
    'user-agent': 'claude-cli/2.1.337 (external, cli)',
    'x-claude-code-session-id': session,
  }
  const metadata = {
    user_id: JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: session }),
  }
  const tools = ['Read', 'Glob', 'Grep', 'Agent', 'Bash', 'ToolSearch'].map((name) => ({
    name,
    description: fillerText(400, `tool-${name}`),
    input_schema: { type: 'object', properties: { query: { type: 'string' } } },
  }))
  const system = [
    text('x-anthropic-billing-header: cc_version=2.1.337.089; cc_entrypoint=cli;'),
    text("You are Claude Code, Anthropic's official CLI for Claude."),
    text(fillerText(3000, 'claude-code-system'), true),
  ]
  const request = (model: string, messages: unknown[]): Body => ({
    model,
    messages,
    system,
    tools,
    metadata,
    max_tokens: 32000,
    thinking: { type: 'adaptive' },
    stream: false,
  })
  const assistant = (value: string) => ({ role: 'assistant', content: [text(value)] })

  it("keeps the TUI's one-message probe before /model out of the conversation, and prices the switch against the last turn", async () => {
    const first = {
      role: 'user',
      content: [
        text(`<system-reminder>\n${fillerText(600, 'notes')}\n</system-reminder>`),
        text('What does README.md say?'),
      ],
    }
    const history: unknown[] = [first]
    await send('/anthropic/v1/messages', request('claude-opus-5-5', [...history]), headers)
    history.push(assistant(fillerText(300, 'answer')), {
      role: 'user',
      content: [text('Tell me more', true)],
    })
    await send('/anthropic/v1/messages', request('claude-opus-5-5', [...history]), headers)
    // `/model claude-haiku-4-5` in the TUI: a probe of the model, then the conversation re-rendered for it.
    await send(
      '/anthropic/v1/messages',
      {
        model: 'claude-haiku-4-5',
        max_tokens: 1,
        system: system.slice(0, 2),
        messages: [{ role: 'user', content: [text('Hi', true)] }],
        metadata,
      },
      headers,
    )
    history.push(assistant('OK.'), { role: 'user', content: [text('And now in one line?', true)] })
    await send('/anthropic/v1/messages', request('claude-haiku-4-5', [...history]), headers)

    const [one, two, probe, switched] = rows()
    expect(probe).toMatchObject({ conversationKind: 'side', session, breakCause: undefined })
    expect(probe?.variant).toMatch(/\.side-probe-/)
    expect([one, two, switched].map((row) => row?.variant)).toEqual([session, session, session])
    expect(switched).toMatchObject({
      turn: 3,
      breakCause: 'config-changed',
      breakNode: 'model',
      cacheReadTokens: 0,
    })
    // What the previous turn left cached on opus, all of which the haiku request wrote again.
    expect(switched?.lostTokens).toBeGreaterThan(
      0.95 * ((two?.cacheReadTokens ?? 0) + (two?.cacheWriteTokens ?? 0)),
    )
    expect((switched?.costUsd ?? 0) - (switched?.idealCostUsd ?? 0)).toBeGreaterThan(0)
  })

  it('counts a ToolSearch result (a tool_reference and "Tool loaded.") as the next step of its turn', async () => {
    const history: unknown[] = [{ role: 'user', content: [text('Echo hi with the MCP tool', true)] }]
    await send('/anthropic/v1/messages', request('claude-opus-5-5', [...history]), headers)
    history.push(
      {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'toolu_1',
            name: 'ToolSearch',
            input: { query: 'select:mcp__cachelab__cachelab_echo' },
          },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [{ type: 'tool_reference', tool_name: 'mcp__cachelab__cachelab_echo' }],
          },
          text('Tool loaded.', true),
        ],
      },
    )
    await send('/anthropic/v1/messages', request('claude-opus-5-5', [...history]), headers)
    history.push(assistant('Done.'), { role: 'user', content: [text('Thanks', true)] })
    await send('/anthropic/v1/messages', request('claude-opus-5-5', [...history]), headers)
    expect(rows().map((row) => `${row.turn}.${row.step}`)).toEqual(['1.1', '1.2', '2.1'])
  })

  it("names the request after /compact as the summary's rewrite, even when it sends as many messages as before", async () => {
    const history: unknown[] = [{ role: 'user', content: [text('What does README.md say?', true)] }]
    await send('/anthropic/v1/messages', request('claude-opus-5-5', [...history]), headers)
    history.push(
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_2', name: 'Read', input: { query: 'README.md' } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: fillerText(1500, 'file') }],
      },
    )
    await send('/anthropic/v1/messages', request('claude-opus-5-5', [...history]), headers)
    await send(
      '/anthropic/v1/messages',
      request('claude-opus-5-5', [
        ...history.slice(0, -1),
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_2', content: fillerText(1500, 'file') },
            text('CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.', true),
          ],
        },
      ]),
      headers,
    )
    // The summary first, the file read kept as notes, the new prompt: three messages, as before.
    await send(
      '/anthropic/v1/messages',
      request('claude-opus-5-5', [
        {
          role: 'user',
          content: `This session is being continued from a previous conversation. ${fillerText(300, 'summary')}`,
        },
        {
          role: 'user',
          content: `<system-reminder>\nResult of calling the Read tool: ${fillerText(200, 'kept')}\n</system-reminder>`,
        },
        { role: 'user', content: [text('One more question', true)] },
      ]),
      headers,
    )
    const all = rows()
    expect(all.find((row) => row.conversationKind === 'compaction')).toBeDefined()
    const after = all.at(-1)
    expect(after).toMatchObject({
      variant: session,
      breakCause: 'history-summarized',
      breakNode: 'messages[0]',
    })
    expect(after?.lostTokens).toBeGreaterThan(0)
    // The break says what the summary request itself cost: it shared the conversation's cached prefix.
    const summary = all.find((row) => row.conversationKind === 'compaction')
    const [line] = breaksOf(all).map(breakLine)
    expect(line).toContain(
      `its summary request read ${countText(summary?.cacheReadTokens ?? 0)} of ${countText(summary?.inputTokens ?? 0)} tokens from the cache and wrote ${countText(summary?.cacheWriteTokens ?? 0)} never read`,
    )
    expect(summary?.cacheReadTokens).toBeGreaterThan(1500)
  })
})

describe('Codex 0.171.0', () => {
  const session = '01a25279-4c99-7202-8381-18e08523e0e1'
  const headers = {
    'user-agent': 'codex_exec/0.171.0 (Debian 12; x86_64)',
    originator: 'codex_exec',
    'session-id': session,
    authorization: 'Bearer test-key',
  }
  const message = (role: string, value: string, id: string) => ({
    type: 'message',
    id,
    role,
    content: [{ type: 'input_text', text: value }],
  })
  const permissions = message('developer', fillerText(1500, 'codex-permissions'), 'msg_a')
  const skills = message(
    'developer',
    `<skills_instructions>${fillerText(800, 'skills')}</skills_instructions>`,
    'msg_b',
  )
  const environment = message(
    'user',
    `<environment_context>${fillerText(100, 'env')}</environment_context>`,
    'msg_c',
  )
  const request = (input: unknown[]): Body => ({
    model: 'gpt-5.4',
    input,
    tools: [
      {
        type: 'function',
        name: 'exec_command',
        description: fillerText(300, 'exec'),
        parameters: { type: 'object', properties: {} },
        strict: false,
      },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    store: false,
    stream: false,
    prompt_cache_key: session,
  })

  it("names the history rebuilt after an automatic compaction as the summary's, not a system prompt change", async () => {
    const history: unknown[] = [
      permissions,
      skills,
      environment,
      message('user', 'What does README.md say?', 'msg_d'),
    ]
    await send('/openai/v1/responses', request([...history]), headers)
    history.push(
      {
        type: 'function_call',
        id: 'fc_1',
        call_id: 'call_1',
        name: 'exec_command',
        arguments: '{"cmd":"cat README.md"}',
      },
      { type: 'function_call_output', call_id: 'call_1', output: fillerText(1200, 'out') },
    )
    await send('/openai/v1/responses', request([...history]), headers)
    await send(
      '/openai/v1/responses',
      {
        ...request([
          ...history,
          message(
            'user',
            'You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary.',
            'msg_e',
          ),
        ]),
        tools: [],
      },
      { ...headers, 'x-codex-turn-metadata': JSON.stringify({ request_kind: 'compaction' }) },
    )
    // Tool calls dropped, the prompts kept, the skills message moved behind them, the summary inserted.
    await send(
      '/openai/v1/responses',
      request([
        permissions,
        message('user', 'What does README.md say?', 'msg_d'),
        message(
          'developer',
          `<skills_instructions>${fillerText(800, 'skills')}</skills_instructions>`,
          'msg_f',
        ),
        environment,
        message(
          'user',
          `Another language model started to solve this problem. ${fillerText(200, 'summary')}`,
          'msg_g',
        ),
      ]),
      headers,
    )
    const after = rows().at(-1)
    expect(after).toMatchObject({ variant: session, breakCause: 'history-summarized' })
    expect(after?.breakNode).toMatch(/^input\[1\]/)
  })
})

describe('Gemini CLI 0.61.0', () => {
  const headers = {
    'user-agent': 'GeminiCLI/0.61.0/gemini-2.5-pro (linux; x64)',
    'x-goog-api-key': 'test-key',
  }
  const context = (files: string[]) => ({
    role: 'user',
    parts: [
      {
        text: `<session_context>\n${fillerText(200, 'gemini-env')}\n${files.map((file) => `└───${file}`).join('\n')}\n</session_context>`,
      },
      { text: 'Say hello' },
    ],
  })
  const request = (contents: unknown[]): Body => ({
    contents,
    systemInstruction: { role: 'user', parts: [{ text: fillerText(2500, 'gemini-system') }] },
    tools: [
      {
        functionDeclarations: [
          {
            name: 'read_file',
            description: fillerText(300, 'read'),
            parametersJsonSchema: { type: 'object' },
          },
        ],
      },
    ],
    generationConfig: { temperature: 1 },
  })
  const path = '/gemini/v1beta/models/gemini-2.5-pro:generateContent'

  it('reads a resume that rebuilt contents[0] (a new file in the workspace) as a break of the same chat, priced', async () => {
    const answer = { role: 'model', parts: [{ text: fillerText(2500, 'long answer') }] }
    await send(path, request([context(['README.md'])]), headers)
    await send(
      path,
      request([context(['README.md']), answer, { role: 'user', parts: [{ text: 'Tell me more' }] }]),
      headers,
    )
    // `gemini --resume latest` after NEW.md appeared: the listing in contents[0] is rendered again.
    await send(
      path,
      request([
        context(['NEW.md', 'README.md']),
        answer,
        { role: 'user', parts: [{ text: 'Tell me more' }] },
        { role: 'model', parts: [{ text: 'More.' }] },
        { role: 'user', parts: [{ text: 'And now?' }] },
      ]),
      headers,
    )
    const [first, second, resumed] = rows()
    expect(new Set([first, second, resumed].map((row) => row?.variant)).size).toBe(1)
    expect(resumed).toMatchObject({ turn: 3, breakCause: 'message-edited', breakNode: 'contents[0].0' })
    // What the previous request left cached past contents[0] is written again.
    expect(resumed?.lostTokens).toBeGreaterThan(2500)
  })
})
