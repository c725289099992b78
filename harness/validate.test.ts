import { describe, expect, it } from 'vitest'
import { KNOWN_EVENT_TYPES } from './session.ts'
import { resumeTestLoop, say, TEST_TOOLS, testLoop, withTool } from './testing.ts'
import type { ImageBlock, SessionEvent } from './types.ts'
import { checkEventShape } from './validate.ts'

const image = (id: string): ImageBlock => ({
  type: 'image',
  id,
  mediaType: 'image/png',
  data: 'iVBORw0KGgo=',
  width: 1,
  height: 1,
})

/** A log the loop wrote with every known event type in it, as read back from disk (JSON round trip). */
async function fullLog(): Promise<SessionEvent[]> {
  const first = testLoop({
    toolUpdate: 'in-history',
    policies: { imageLimit: 1, imageQuantum: 1 },
  })
  const { loop, world, port } = first
  port.failNext({ status: 429, type: 'rate_limit_error', message: 'slow down', retryable: true }, 10)
  await loop.turn(withTool('read a', 'x'.repeat(100)), world)
  await loop.turn({ kind: 'turn', user: [image('img-1')], steps: [{ text: 'seen' }] }, world)
  await loop.turn({ kind: 'turn', user: [image('img-2')], steps: [{ text: 'seen' }] }, world)
  world.tools = [...TEST_TOOLS, { name: 'grep', description: 'Search.', parameters: { type: 'object' } }]
  loop.inject('workspace changed', 'watcher')
  await loop.turn(say('search'), world)
  loop.prune({ thresholdChars: 50, keepChars: 10, skipLastNodes: 2 })
  await loop.compact(2, 20, world)
  const resumed = resumeTestLoop(first)
  await resumed.turn(say('again'), world)
  return JSON.parse(JSON.stringify(first.events)) as SessionEvent[]
}

const log = fullLog()

/** The value that makes `edited` delete a field. */
const REMOVE = Symbol('remove')

/** A deep copy of `event` with the value at `path` replaced, or removed when `value` is REMOVE. */
function edited(event: SessionEvent, path: ReadonlyArray<string | number>, value: unknown): unknown {
  const copy = structuredClone(event) as unknown as Record<string | number, unknown>
  let parent = copy
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>
  const last = path.at(-1) as string | number
  if (value === REMOVE) Reflect.deleteProperty(parent, last)
  else parent[last] = value
  return copy
}

/** The first logged event of `type` that `where` accepts. */
async function logged(type: string, where: (event: SessionEvent) => boolean = () => true) {
  const event = (await log).find((candidate) => candidate.type === type && where(candidate))
  if (event === undefined) throw new Error(`the log has no ${type} event`)
  return event
}

const hasImage = (event: SessionEvent) =>
  event.type === 'user/message' && event.data.message.content[0]?.type === 'image'
const callsTool = (event: SessionEvent) =>
  event.type === 'assistant/message' && event.data.message.content[0]?.type === 'tool-call'
const withUsage = (event: SessionEvent) =>
  event.type === 'assistant/message' && event.data.usage !== undefined
const withTools = (event: SessionEvent) =>
  event.type === 'request/header' && (event.data.header.tools?.length ?? 0) > 0

/** An event of the log with one field edited, and the problem that must be reported for it. */
interface FieldCase {
  name: string
  type: string
  where?: (event: SessionEvent) => boolean
  path: Array<string | number>
  value: unknown
  problem: string
}

describe('checkEventShape', () => {
  it('accepts every event of a log the loop wrote, and the log has every known event type', async () => {
    const events = await log
    expect(new Set(events.map((event) => event.type))).toEqual(KNOWN_EVENT_TYPES)
    for (const event of events) expect(checkEventShape(event)).toEqual({ event })
  })

  it('accepts an event type it does not know when the writer marked it ignorable', () => {
    const foreign = { seq: 3, time: 1, type: 'plugin/thing', data: { anything: [1] }, ignorable: true }
    expect(checkEventShape(foreign)).toEqual({ event: foreign })
  })

  for (const [description, value] of [
    ['an array', []],
    ['null', null],
    ['a string', 'session/start'],
    ['a number', 42],
  ] as const) {
    it(`rejects a line that is ${description} rather than an object`, () => {
      expect(checkEventShape(value)).toEqual({ problem: 'a log line must be a JSON object' })
    })
  }

  for (const { description, field, value, problem } of [
    {
      description: 'no seq',
      field: 'seq',
      value: REMOVE,
      problem: 'event.seq must be a whole number of zero or more',
    },
    {
      description: 'a seq in a string',
      field: 'seq',
      value: '1',
      problem: 'event.seq must be a whole number of zero or more',
    },
    {
      description: 'a time of NaN',
      field: 'time',
      value: Number.NaN,
      problem: 'event.time must be a number',
    },
    {
      description: 'an infinite time',
      field: 'time',
      value: Number.POSITIVE_INFINITY,
      problem: 'event.time must be a number',
    },
    { description: 'no type', field: 'type', value: REMOVE, problem: 'event.type must be a string' },
    { description: 'no data', field: 'data', value: REMOVE, problem: 'data must be an object' },
    { description: 'data that is an array', field: 'data', value: [], problem: 'data must be an object' },
  ]) {
    it(`rejects an event with ${description}`, async () => {
      expect(checkEventShape(edited(await logged('turn/start'), [field], value))).toEqual({ problem })
    })
  }

  for (const [description, ignorable] of [
    ['unmarked', REMOVE],
    ['marked false', false],
    ['marked with the string "true"', 'true'],
  ] as const) {
    it(`rejects an unknown event type ${description}`, async () => {
      const foreign = edited(await logged('turn/start'), ['type'], 'plugin/thing') as SessionEvent
      expect(checkEventShape(edited(foreign, ['ignorable'], ignorable))).toEqual({
        problem: 'unknown event type "plugin/thing" (not marked ignorable)',
      })
    })
  }

  const fieldCases: FieldCase[] = [
    {
      name: 'a turn that is not a number',
      type: 'turn/start',
      path: ['data', 'turn'],
      value: 'one',
      problem: 'data.turn must be a whole number of zero or more',
    },
    {
      name: 'a turn end reason outside the vocabulary',
      type: 'turn/end',
      path: ['data', 'reason'],
      value: 'done',
      problem: 'data.reason must be one of completed, error, max-steps, aborted',
    },
    {
      name: 'a session id that is missing',
      type: 'session/start',
      path: ['data', 'sessionId'],
      value: REMOVE,
      problem: 'data.sessionId must be a string',
    },
    {
      name: 'user content that is not an array',
      type: 'user/message',
      path: ['data', 'message', 'content'],
      value: 'hi',
      problem: 'data.message.content must be an array',
    },
    {
      name: 'a user content block of an unknown type',
      type: 'user/message',
      path: ['data', 'message', 'content', 0, 'type'],
      value: 'video',
      problem: 'data.message.content[0].type must be one of text, image',
    },
    {
      name: 'an image of an unsupported media type',
      type: 'user/message',
      where: hasImage,
      path: ['data', 'message', 'content', 0, 'mediaType'],
      value: 'image/gif',
      problem: 'data.message.content[0].mediaType must be one of image/png, image/jpeg',
    },
    {
      name: 'an image without a width',
      type: 'user/message',
      where: hasImage,
      path: ['data', 'message', 'content', 0, 'width'],
      value: REMOVE,
      problem: 'data.message.content[0].width must be a whole number of zero or more',
    },
    {
      name: 'a user message in the role of another',
      type: 'user/message',
      path: ['data', 'message', 'role'],
      value: 'assistant',
      problem: 'data.message.role must be one of user',
    },
    {
      name: 'a message source of an unknown kind',
      type: 'user/message',
      path: ['data', 'source'],
      value: { kind: 'robot' },
      problem: 'data.source.kind must be one of user, plugin',
    },
    {
      name: 'a plugin source without the plugin name',
      type: 'user/message',
      path: ['data', 'source'],
      value: { kind: 'plugin' },
      problem: 'data.source.plugin must be a string',
    },
    {
      name: 'tool-call arguments that are not JSON text',
      type: 'assistant/message',
      where: callsTool,
      path: ['data', 'message', 'content', 0, 'arguments'],
      value: { path: 'a.ts' },
      problem: 'data.message.content[0].arguments must be a string',
    },
    {
      name: 'an image in an assistant message',
      type: 'assistant/message',
      path: ['data', 'message', 'content', 0],
      value: image('img-9'),
      problem: 'data.message.content[0].type must be one of text, tool-call',
    },
    {
      name: 'a usage bucket that is not a number',
      type: 'assistant/message',
      where: withUsage,
      path: ['data', 'usage', 'cacheRead'],
      value: '12',
      problem: 'data.usage.cacheRead must be a whole number of zero or more',
    },
    {
      name: 'usage without its input total',
      type: 'assistant/message',
      where: withUsage,
      path: ['data', 'usage', 'input'],
      value: REMOVE,
      problem: 'data.usage.input must be a whole number of zero or more',
    },
    {
      name: 'an attempt error whose retryable flag is not a boolean',
      type: 'assistant/attempt',
      path: ['data', 'error', 'retryable'],
      value: 'yes',
      problem: 'data.error.retryable must be a boolean',
    },
    {
      name: 'a tool result in the role of a user',
      type: 'tool/result',
      path: ['data', 'message', 'role'],
      value: 'user',
      problem: 'data.message.role must be one of tool',
    },
    {
      name: 'a tool call without its call id',
      type: 'tool/call',
      path: ['data', 'callId'],
      value: REMOVE,
      problem: 'data.callId must be a string',
    },
    {
      name: 'a header without a model',
      type: 'request/header',
      path: ['data', 'header', 'config', 'model'],
      value: REMOVE,
      problem: 'data.header.config.model must be a string',
    },
    {
      name: 'a tool definition whose parameters are not an object',
      type: 'request/header',
      where: withTools,
      path: ['data', 'header', 'tools', 0, 'parameters'],
      value: '{}',
      problem: 'data.header.tools[0].parameters must be an object',
    },
    {
      name: 'a header message of an unknown role',
      type: 'request/header',
      path: ['data', 'header', 'messagePrefix'],
      value: [{ role: 'robot', text: 'hi' }],
      problem: 'data.header.messagePrefix[0].role must be one of user, assistant, system, developer, tool',
    },
    {
      name: 'a header reason outside the vocabulary',
      type: 'request/header',
      path: ['data', 'reason'],
      value: 'restart',
      problem: 'data.reason must be one of initial, resume, change, series',
    },
    {
      name: 'a system-prompt update outside the vocabulary',
      type: 'request/context',
      path: ['data', 'systemPromptUpdate'],
      value: 'unsupported',
      problem: 'data.systemPromptUpdate must be one of in-history',
    },
    {
      name: 'a developer message whose header seq is not a number',
      type: 'developer/message',
      path: ['data', 'headerSeq'],
      value: '4',
      problem: 'data.headerSeq must be a whole number of zero or more',
    },
    {
      name: 'a compaction of an unknown kind',
      type: 'compaction/start',
      path: ['data', 'kind'],
      value: 'drop',
      problem: 'data.kind must be one of summary, prune',
    },
    {
      name: 'shadowed seqs that are not numbers',
      type: 'compaction/summary',
      path: ['data', 'shadowedSeqs', 0],
      value: '3',
      problem: 'data.shadowedSeqs[0] must be a whole number of zero or more',
    },
    {
      name: 'a prune that keeps an unknown part',
      type: 'compaction/prune',
      path: ['data', 'keep'],
      value: 'all',
      problem: 'data.keep must be one of head, middle, tail',
    },
    {
      name: 'offload targets whose image ids are not an array',
      type: 'image/offload',
      path: ['data', 'targets', 0, 'imageIds'],
      value: 'img-1',
      problem: 'data.targets[0].imageIds must be an array',
    },
    {
      name: 'an offload of an unknown mode',
      type: 'image/offload',
      path: ['data', 'mode'],
      value: 'eager',
      problem: 'data.mode must be one of quantized, per-request',
    },
    {
      name: 'a replace op without its end',
      type: 'tool/result',
      path: ['surfaceOp'],
      value: { op: 'replace', startSeq: 3 },
      problem: 'surfaceOp.endSeq must be a whole number of zero or more',
    },
    {
      name: 'a surface op of an unknown kind',
      type: 'tool/result',
      path: ['surfaceOp'],
      value: { op: 'insert', startSeq: 3, endSeq: 3 },
      problem: 'surfaceOp.op must be one of replace',
    },
    {
      name: 'source event seqs that are not numbers',
      type: 'user/message',
      path: ['sourceEventSeqs'],
      value: ['3'],
      problem: 'sourceEventSeqs[0] must be a whole number of zero or more',
    },
  ]
  for (const { name, type, where, path, value, problem } of fieldCases) {
    it(`rejects ${name}, naming the field at fault`, async () => {
      expect(checkEventShape(edited(await logged(type, where), path, value))).toEqual({ problem })
    })
  }

  it('rejects a surface event without a surface op, naming the field', async () => {
    const checked = checkEventShape(edited(await logged('user/message'), ['surfaceOp'], REMOVE))
    expect(checked).toEqual({ problem: 'surfaceOp must be "append" or a replace object' })
  })

  it.each([
    [
      'a negative turn',
      'turn/start',
      ['data', 'turn'],
      -1,
      'data.turn must be a whole number of zero or more',
    ],
    ['a fractional seq', 'turn/start', ['seq'], 1.5, 'event.seq must be a whole number of zero or more'],
    [
      'an unknown provider',
      'request/context',
      ['data', 'provider'],
      'ACME',
      "data.provider must be one of anthropic, openai-chat, openai-responses, deepseek, bedrock, gemini or a compatible provider's id",
    ],
    [
      'an isError that is not true',
      'tool/result',
      ['data', 'message', 'isError'],
      'yes',
      'data.message.isError must be true when present',
    ],
    [
      'a replayPrefix that is not a boolean',
      'compaction/start',
      ['data', 'replayPrefix'],
      1,
      'data.replayPrefix must be a boolean',
    ],
    [
      'a latency that is not a number',
      'assistant/message',
      ['data', 'latencyMs'],
      'fast',
      'data.latencyMs must be a number',
    ],
  ])('rejects %s', async (_name, type, path, value, problem) => {
    expect(checkEventShape(edited(await logged(type), path, value))).toEqual({ problem })
  })

  it('checks the optional fields it knows only when they are present', async () => {
    const header = await logged('request/header', withTools)
    expect(checkEventShape(edited(header, ['data', 'header', 'tools'], REMOVE))).toHaveProperty('event')
    const message = await logged('assistant/message', withUsage)
    expect(checkEventShape(edited(message, ['data', 'usage'], REMOVE))).toHaveProperty('event')
  })
})
