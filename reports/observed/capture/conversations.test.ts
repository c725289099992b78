import { describe, expect, it } from 'vitest'
import type { WireApi } from '../../../providers/types.ts'
import { itemDigest, itemsOf } from '../../../providers/wire/digest.ts'
import type { Placement } from '../../../providers/wire/exchange.ts'
import { ConversationTracker, continuationScore, safeSessionId } from './conversations.ts'

type Message = Record<string, unknown>
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] })
const marked = (message: Message): Message => ({
  ...message,
  content: (message.content as Message[]).map((block) => ({
    ...block,
    cache_control: { type: 'ephemeral' },
  })),
})

/** Place an Anthropic body, as the capture does. */
function send(
  tracker: ConversationTracker,
  body: Record<string, unknown>,
  declared?: string,
  headers: Record<string, string> = {},
): Placement {
  const items = (body.messages as Message[]).map(itemDigest)
  return tracker.place({ api: 'anthropic-messages', body, headers }, items, {
    ...(declared !== undefined ? { declared } : {}),
  })
}

const long = (label: string) => `${label}: ${'a conversation that says something specific. '.repeat(3)}`

describe('telling sessions apart without a header', () => {
  it('keeps a conversation whose system prompt was rewritten in one session', () => {
    const tracker = new ConversationTracker()
    const history = [user('first question')]
    const first = send(tracker, { system: 'You are helpful.', messages: [...history] })
    history.push(assistant(long('answer')), user('second question'))
    const second = send(tracker, { system: 'REWRITTEN: you are helpful.', messages: [...history] })
    expect(first.identity).toBe('new')
    expect(second).toMatchObject({ conversation: first.conversation, identity: 'continuation', kind: 'main' })
  })

  it('ignores a rolling cache breakpoint that moves to the latest message', () => {
    const tracker = new ConversationTracker()
    const first = send(tracker, { messages: [marked(user('hello there'))] })
    const second = send(tracker, {
      messages: [user('hello there'), assistant('hi'), marked(user('and now?'))],
    })
    expect(second.conversation).toBe(first.session)
  })

  it('reads string content and the text block it is shorthand for as one message', () => {
    const tracker = new ConversationTracker()
    const first = send(tracker, { messages: [marked(user('hello there'))] })
    const second = send(tracker, {
      messages: [{ role: 'user', content: 'hello there' }, assistant('hi'), marked(user('and now?'))],
    })
    expect(second.conversation).toBe(first.session)
  })

  it('opens a new session for a conversation that begins alike but is at its own first request', () => {
    const tracker = new ConversationTracker()
    const first = send(tracker, { messages: [user('hello')] })
    send(tracker, { messages: [user('hello'), assistant('hi'), user('more')] })
    const other = send(tracker, { messages: [user('hello')] })
    expect(other.identity).toBe('new')
    expect(other.conversation).toBe(`${first.conversation}-2`)
  })

  it('keeps two interleaved conversations apart', () => {
    const tracker = new ConversationTracker()
    const a = send(tracker, { messages: [user('topic A')] })
    const b = send(tracker, { messages: [user('topic B')] })
    expect(send(tracker, { messages: [user('topic A'), assistant('a'), user('A again')] }).conversation).toBe(
      a.session,
    )
    expect(send(tracker, { messages: [user('topic B'), assistant('b'), user('B again')] }).conversation).toBe(
      b.session,
    )
    expect(a.conversation).not.toBe(b.conversation)
  })

  it('follows a history truncated to its latest messages', () => {
    const tracker = new ConversationTracker()
    const history = [user('one'), assistant(long('reply one')), user('two'), assistant(long('reply two'))]
    const first = send(tracker, { messages: [...history] })
    const truncated = send(tracker, { messages: [history[3] as Message, user('three')] })
    expect(truncated.conversation).toBe(first.session)
  })

  it('believes the session header, then the conversation key', () => {
    const tracker = new ConversationTracker()
    expect(send(tracker, { messages: [user('x')] }, 'run 7/a')).toMatchObject({
      session: safeSessionId('run 7/a'),
      conversation: safeSessionId('run 7/a'),
      identity: 'header',
    })
    expect(send(tracker, { messages: [user('x')], metadata: { user_id: 'u-42' } })).toMatchObject({
      session: 'user-u-42',
      identity: 'conversation-key',
    })
    const openai = tracker.place(
      { api: 'openai-chat', body: { prompt_cache_key: 'tenant-9', messages: [] }, headers: {} },
      [],
    )
    expect(openai).toMatchObject({ session: 'key-tenant-9', identity: 'conversation-key' })
  })
})

describe('session ids', () => {
  it('keeps a safe name as is and makes any other one file-safe and distinct', () => {
    expect(safeSessionId('checkout-flow.1')).toBe('checkout-flow.1')
    const unsafe = safeSessionId('../../etc/passwd')
    expect(unsafe).toMatch(/^[A-Za-z0-9._-]+$/)
    expect(unsafe).not.toContain('/')
    expect(safeSessionId('a/b')).not.toBe(safeSessionId('a_b'))
  })

  it('never makes a name of a key: a key-like value is its hash', () => {
    const key = 'sk-test-0123456789abcdef'
    const named = safeSessionId(`key-${key}`)
    expect(named).toMatch(/^key-[0-9a-f]{16}$/)
    expect(named).not.toContain('sk-')
    expect(named).not.toContain('0123456789')
    expect(safeSessionId(`user-AIza${'x'.repeat(35)}`)).toMatch(/^user-[0-9a-f]{16}$/)
    expect(safeSessionId(`key-${key}`)).toBe(named)
  })

  it("never makes a name of the request's own key, whatever its shape", () => {
    const key = 'plain-caller-key-0001'
    expect(safeSessionId(`user-${key}`, [key])).toMatch(/^user-[0-9a-f]{16}$/)
    expect(safeSessionId(`user-${key}`, ['another-key-0002'])).toBe(`user-${key}`)
  })
})

describe('the continuation score', () => {
  const digests = (messages: Message[]) => messages.map(itemDigest)
  it('ranks an extension above an edited history above a truncated one, and a stranger at 0', () => {
    const previous = digests([user('q1'), assistant(long('a1')), user('q2')])
    const extended = continuationScore(
      previous,
      digests([user('q1'), assistant(long('a1')), user('q2'), assistant('a2')]),
    )
    const edited = continuationScore(
      previous,
      digests([user('q1'), assistant('EDITED'), user('q2'), user('q3')]),
    )
    const truncated = continuationScore(
      digests([user('q1'), assistant(long('a1'))]),
      digests([assistant(long('a1')), user('q3')]),
    )
    const stranger = continuationScore(previous, digests([user('something else')]))
    expect(extended).toBeGreaterThan(edited)
    expect(edited).toBeGreaterThan(truncated)
    expect(truncated).toBeGreaterThan(0)
    expect(stranger).toBe(0)
  })

  it('ranks a history whose first message alone was rebuilt between an edit and a truncation', () => {
    const previous = digests([user('workspace: a.md'), assistant(long('a1')), user('q2')])
    const rebuilt = continuationScore(
      previous,
      digests([
        user('workspace: a.md, new.md'),
        assistant(long('a1')),
        user('q2'),
        assistant('a2'),
        user('q3'),
      ]),
    )
    const edited = continuationScore(
      previous,
      digests([user('workspace: a.md'), assistant('EDITED'), user('q2'), user('q3')]),
    )
    const truncated = continuationScore(
      digests([user('q1'), assistant(long('a1'))]),
      digests([assistant(long('a1')), user('q3')]),
    )
    expect(rebuilt).toBeLessThan(edited)
    expect(rebuilt).toBeGreaterThan(truncated)
    // Too little after the first message to tell one chat from another.
    expect(
      continuationScore(
        digests([user('hi'), assistant('ok')]),
        digests([user('hello'), assistant('ok'), user('x')]),
      ),
    ).toBe(0)
  })
})

/** Place a body of `api` with `headers`, as the capture does. */
function place(
  tracker: ConversationTracker,
  api: WireApi,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Placement {
  return tracker.place({ api, body, headers }, itemsOf(body).map(itemDigest))
}

const where = (placement: Placement) =>
  `${placement.conversation} ${placement.kind} ${placement.turn}.${placement.step}/${placement.attempt}`

describe('conversations of Claude Code', () => {
  const sessionId = '6f1c2a9e-0000-4000-8000-000000000001'
  const device = 'd'.repeat(64)
  const headers = (agentId?: string) => ({
    'user-agent': 'claude-cli/2.1.328 (external, sdk-cli)',
    'x-claude-code-session-id': sessionId,
    ...(agentId !== undefined ? { 'x-claude-code-agent-id': agentId } : {}),
  })
  const metadata = { user_id: JSON.stringify({ device_id: device, account_uuid: '', session_id: sessionId }) }
  const mainSystem = [{ type: 'text', text: 'You are the main agent.' }]
  const mainTools = [
    { name: 'Read', input_schema: { type: 'object' } },
    { name: 'Agent', input_schema: { type: 'object' } },
  ]
  const main = (messages: Message[]) => ({
    model: 'claude-opus-5-5',
    system: mainSystem,
    tools: mainTools,
    metadata,
    messages,
  })
  const call = (id: string): Message => ({
    role: 'assistant',
    content: [{ type: 'tool_use', id, name: 'Read', input: {} }],
  })
  const result = (id: string, extra: Message[] = []): Message => ({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: id, content: long('file') }, ...extra],
  })
  const reminder = { type: 'text', text: '<system-reminder>\nTokens left.\n</system-reminder>' }

  it('keeps the main conversation, a subagent, a title and a compaction apart, numbered as typed', () => {
    const tracker = new ConversationTracker()
    const prompt1 = { role: 'user', content: [reminder, { type: 'text', text: 'Read README.md' }] }
    const turn1 = [prompt1, call('t1'), result('t1', [reminder])]
    const subagentBody = (messages: Message[]) => ({
      model: 'claude-opus-5-5',
      system: [
        { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.328.826; cc_is_subagent=true;' },
      ],
      tools: [mainTools[0]],
      metadata,
      messages,
    })
    const placed = [
      place(tracker, 'anthropic-messages', main([prompt1]), headers()),
      place(tracker, 'anthropic-messages', main(turn1), headers()),
      place(
        tracker,
        'anthropic-messages',
        main([...turn1, assistant('Done.'), user('Now explore the code')]),
        headers(),
      ),
      place(
        tracker,
        'anthropic-messages',
        subagentBody([user('Explore src/')]),
        headers('a0123456789abcdef'),
      ),
      place(
        tracker,
        'anthropic-messages',
        {
          model: 'claude-opus-5-5',
          system: [{ type: 'text', text: 'You are naming a coding session.' }],
          tools: [],
          output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
          metadata,
          messages: [user('Read README.md')],
        },
        headers(),
      ),
      place(
        tracker,
        'anthropic-messages',
        subagentBody([user('Explore src/'), call('s1'), result('s1')]),
        headers('a0123456789abcdef'),
      ),
      place(
        tracker,
        'anthropic-messages',
        main([
          ...turn1,
          assistant('Done.'),
          user('Now explore the code'),
          user('CRITICAL: Respond with TEXT ONLY. Summarize.'),
        ]),
        headers(),
      ),
      place(
        tracker,
        'anthropic-messages',
        main([
          user('This session is being continued from a previous conversation. Summary.'),
          user('One more thing'),
        ]),
        headers(),
      ),
    ].map(where)
    const title = placed[4]?.split(' ')[0] ?? ''
    const compaction = placed[6]?.split(' ')[0] ?? ''
    expect(placed).toEqual([
      `${sessionId} main 1.1/0`,
      `${sessionId} main 1.2/0`,
      `${sessionId} main 2.1/0`,
      `${sessionId}.subagent-a0123456789abcdef subagent 1.1/0`,
      `${title} side 1.1/0`,
      `${sessionId}.subagent-a0123456789abcdef subagent 1.2/0`,
      `${compaction} compaction 1.1/0`,
      `${sessionId} main 3.1/0`,
    ])
    expect(title).toMatch(new RegExp(`^${sessionId}\\.side-title-[0-9a-f]{8}$`))
    expect(compaction).toMatch(new RegExp(`^${sessionId}\\.compaction-1$`))
    expect(placed.join(' ')).not.toContain(device)
  })

  it('names its conversations the same whatever order their requests arrive in', () => {
    const bodies: Array<[Record<string, unknown>, Record<string, string>]> = [
      [main([user('Start')]), headers()],
      [main([user('Task A')]), headers('aaaaaaaaaaaaaaaaa')],
      [main([user('Task B')]), headers('bbbbbbbbbbbbbbbbb')],
    ]
    const names = (order: number[]) => {
      const tracker = new ConversationTracker()
      return order
        .map((index) => {
          const [body, sent] = bodies[index] as [Record<string, unknown>, Record<string, string>]
          return place(tracker, 'anthropic-messages', body, sent).conversation
        })
        .sort()
    }
    expect(names([0, 1, 2])).toEqual(names([2, 1, 0]))
    expect(names([0, 1, 2])).toContain(`${sessionId}.subagent-bbbbbbbbbbbbbbbbb`)
  })
})

describe('conversations of Codex', () => {
  const session = '01a23346-1997-7000-8000-000000000002'
  const headers = (extra: Record<string, string> = {}) => ({
    'user-agent': 'codex_exec/0.169.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.169.0)',
    originator: 'codex_exec',
    'session-id': session,
    'thread-id': session,
    ...extra,
  })
  const developer = { role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent.' }] }
  const environment = {
    role: 'user',
    content: [{ type: 'input_text', text: '<environment_context>cwd</environment_context>' }],
  }
  const prompt = (text: string) => ({ role: 'user', content: [{ type: 'input_text', text }] })
  const answer = (text: string) => ({
    type: 'message',
    role: 'assistant',
    content: [{ type: 'output_text', text }],
  })
  const body = (input: unknown[], extra: Record<string, unknown> = {}) => ({
    model: 'gpt-5.4',
    prompt_cache_key: session,
    tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object' } }],
    input,
    ...extra,
  })

  it('counts the environment message with the prompt as one turn, and puts compaction and a subagent apart', () => {
    const tracker = new ConversationTracker()
    const first = [developer, environment, prompt('List the files')]
    const placed = [
      place(tracker, 'openai-responses', body(first), headers()),
      place(tracker, 'openai-responses', body([...first, answer('OK.'), prompt('Now the tests')]), headers()),
      place(
        tracker,
        'openai-responses',
        body(
          [
            ...first,
            answer('OK.'),
            prompt('Now the tests'),
            prompt('You are performing a CONTEXT CHECKPOINT COMPACTION.'),
          ],
          { tools: [] },
        ),
        headers({ 'x-codex-turn-metadata': JSON.stringify({ request_kind: 'compaction' }) }),
      ),
      place(
        tracker,
        'openai-responses',
        body([developer, environment, prompt('Check the docs')]),
        headers({ 'thread-id': 'child-thread', 'x-openai-subagent': 'collab_spawn' }),
      ),
      place(
        tracker,
        'openai-responses',
        body([
          developer,
          prompt('List the files'),
          prompt('Another model summarized: …'),
          prompt('Third prompt'),
        ]),
        headers(),
      ),
    ]
    expect(placed.map(where)).toEqual([
      `${session} main 1.1/0`,
      `${session} main 2.1/0`,
      `${placed[2]?.conversation} compaction 1.1/0`,
      `${session}.subagent-child-thread subagent 1.1/0`,
      `${session} main 3.1/0`,
    ])
    expect(placed.every((placement) => placement.agent === 'codex/0.169.0')).toBe(true)
  })
})

describe('side requests of agents that send no session id', () => {
  it("keep Gemini CLI's router apart from the turns it routes", () => {
    const tracker = new ConversationTracker()
    const headers = { 'user-agent': 'GeminiCLI-tui/0.61.0/gemini-3.1-pro-preview (linux; x64; terminal)' }
    const tools = [
      { functionDeclarations: [{ name: 'read_file', parametersJsonSchema: { type: 'object' } }] },
    ]
    const router = (contents: unknown[]) => ({
      systemInstruction: { parts: [{ text: 'You are a specialized Task Routing AI.' }] },
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: { type: 'OBJECT' } },
      contents,
    })
    const main = (contents: unknown[]) => ({
      systemInstruction: { parts: [{ text: 'You are Gemini CLI.' }] },
      tools,
      contents,
    })
    const turn1 = {
      role: 'user',
      parts: [{ text: '<session_context>today</session_context>' }, { text: 'Read README.md' }],
    }
    const reply = { role: 'model', parts: [{ text: long('README says') }] }
    const turn2 = { role: 'user', parts: [{ text: 'And the notes?' }] }
    const placed = [
      place(
        tracker,
        'gemini-generate',
        router([{ role: 'user', parts: [{ text: 'Read README.md' }] }]),
        headers,
      ),
      place(tracker, 'gemini-generate', main([turn1]), headers),
      place(tracker, 'gemini-generate', router([turn1, reply, turn2]), headers),
      place(tracker, 'gemini-generate', main([turn1, reply, turn2]), headers),
    ]
    expect(placed.map((placement) => placement.kind)).toEqual(['side', 'main', 'side', 'main'])
    expect(placed[3]?.conversation).toBe(placed[1]?.conversation)
    expect(placed[3]).toMatchObject({ turn: 2, step: 1 })
    expect(placed[2]?.conversation).toMatch(/^gemini-cli-side-router-/)
  })

  it("keep qwen-code's memory extraction apart from the main conversation it reads", () => {
    const tracker = new ConversationTracker()
    const headers = { 'user-agent': 'QwenCode/0.24.4 (linux; x64)' }
    const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }]
    const history = [
      { role: 'user', content: 'Explain the code' },
      { role: 'assistant', content: long('It adds numbers') },
    ]
    const main = place(
      tracker,
      'openai-chat',
      {
        model: 'gpt-5.4',
        tools,
        messages: [{ role: 'system', content: 'You are Qwen Code.' }, ...history.slice(0, 1)],
      },
      headers,
    )
    const memory = place(
      tracker,
      'openai-chat',
      {
        model: 'gpt-5.4',
        tools: tools.slice(0, 1),
        messages: [
          {
            role: 'system',
            content:
              'You are now acting as the managed memory extraction subagent for an AI coding assistant.',
          },
          ...history,
          { role: 'user', content: 'Managed memory has TWO directories.' },
        ],
      },
      headers,
    )
    const next = place(
      tracker,
      'openai-chat',
      {
        model: 'gpt-5.4',
        tools,
        messages: [
          { role: 'system', content: 'You are Qwen Code.' },
          ...history,
          { role: 'user', content: 'Thanks' },
        ],
      },
      headers,
    )
    expect([main.kind, memory.kind, next.kind]).toEqual(['main', 'side', 'main'])
    expect(next.conversation).toBe(main.conversation)
    expect(next.turn).toBe(2)
  })

  it("keep opencode's title request out of the conversation it names", () => {
    const tracker = new ConversationTracker()
    const headers = {
      'user-agent': 'opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14',
      'x-session-id': 'ses_abc',
    }
    const tools = [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }]
    const title = place(
      tracker,
      'openai-chat',
      {
        model: 'gpt-4.1',
        messages: [
          { role: 'system', content: 'You are a title generator. You output ONLY a thread title.' },
          { role: 'user', content: 'Generate a title for this conversation:\n' },
          { role: 'user', content: 'List the files' },
        ],
      },
      headers,
    )
    const main = place(
      tracker,
      'openai-chat',
      {
        model: 'gpt-4.1',
        tools,
        messages: [
          { role: 'system', content: 'You are opencode.' },
          { role: 'user', content: 'List the files' },
        ],
      },
      headers,
    )
    expect(title).toMatchObject({ kind: 'side', purpose: 'title', session: 'ses_abc' })
    expect(main).toMatchObject({ conversation: 'ses_abc', kind: 'main', turn: 1, step: 1 })
  })
})

describe('turns of a history rewritten from its first message', () => {
  it('go on from the latest turn: a re-rendered history with a new prompt is the next turn, a retry of it the same', () => {
    const tracker = new ConversationTracker()
    const history: Message[] = [user('one'), assistant('a1'), user('two'), assistant('a2'), user('three')]
    for (let length = 1; length <= history.length; length += 2)
      send(tracker, { messages: history.slice(0, length) }, 'session')
    // Another model: every message rendered anew, the same prompts, and a fourth one.
    const rendered = history.map((message) => ({
      ...message,
      content: `${JSON.stringify(message.content)} (rendered)`,
    }))
    const fourth = send(tracker, { messages: [...rendered, assistant('a3'), user('four')] }, 'session')
    const again = send(tracker, { messages: [user('summary of it all'), user('four')] }, 'session')
    expect([fourth.turn, again.turn]).toEqual([4, 4])
  })
})

describe('a conversation whose agent re-renders its notes on resume', () => {
  it('is continued, as an edit, though its first message lost a reminder', () => {
    const tracker = new ConversationTracker()
    const note = (text: string) => ({ type: 'text', text: `<system-reminder>\n${text}\n</system-reminder>` })
    const first = {
      role: 'user',
      content: [note('Skills.'), note('Today is 2026-12-01.'), { type: 'text', text: 'Say hello' }],
    }
    const opened = send(tracker, { system: 'S', messages: [first] })
    const resumed = send(tracker, {
      system: 'S',
      messages: [
        { ...first, content: [note('Skills.'), { type: 'text', text: 'Say hello' }] },
        assistant('Hello.'),
        { role: 'user', content: [note('Today is 2026-12-01.'), { type: 'text', text: 'Read the notes' }] },
      ],
    })
    expect(resumed).toMatchObject({ conversation: opened.conversation, identity: 'continuation', turn: 2 })
  })
})
