import { describe, expect, it } from 'vitest'
import { checkFaultRules, parseFaultHeader, parseFaultSchedule } from './fault-spec.ts'

describe('the x-cachelab-fault header', () => {
  it('reads a status or a kind, with the parameters the kind takes', () => {
    expect(parseFaultHeader('429;retry-after-ms=10')).toEqual({
      fault: { kind: 'rate-limit', retryAfterMs: 10 },
      times: 1,
      text: '429;retry-after-ms=10',
    })
    expect(parseFaultHeader('rate-limit; retry-after=2; retry-after-ms=1500; times=3').fault).toEqual({
      kind: 'rate-limit',
      retryAfterMs: 1500,
      retryAfterSeconds: 2,
    })
    expect(parseFaultHeader('RATE-LIMIT;times=3').times).toBe(3)
    expect(parseFaultHeader('529').fault).toEqual({ kind: 'overloaded' })
    expect(parseFaultHeader('503').fault).toEqual({ kind: 'overloaded' })
    expect(parseFaultHeader('500').fault).toEqual({ kind: 'server-error' })
    expect(parseFaultHeader('stream-cut;after-frames=3').fault).toEqual({
      kind: 'stream-cut',
      afterFrames: 3,
    })
    expect(parseFaultHeader('stream-error').fault).toEqual({ kind: 'stream-error' })
  })

  it.each([
    ['428', /unknown fault "428" \(expected 429 \(rate-limit\), 529 or 503/],
    ['constructor', /unknown fault "constructor"/],
    ['429;retry-after-ms=soon', /retry-after-ms must be a whole number of milliseconds, not "soon"/],
    ['429;retry-after=-1', /retry-after must be a whole number of seconds, not "-1"/],
    ['429;wait=3', /rate-limit takes retry-after-ms, retry-after, times, not "wait"/],
    ['500;retry-after-ms=10', /server-error takes times, not "retry-after-ms"/],
    ['stream-cut', /stream-cut needs after-frames \(a whole number of frames\)/],
    ['stream-error;times=0', /times must be a whole number from 1, not "0"/],
  ])('refuses %s, saying why', (text, message) => {
    expect(() => parseFaultHeader(text)).toThrow(message)
  })
})

describe('a fault schedule file', () => {
  const rules = [
    { session: 'agent-1', sessionRequest: 2, fault: '429;retry-after-ms=10' },
    { provider: 'anthropic', fault: { kind: 'overloaded' }, times: 2 },
    { request: 5, fault: { kind: 'stream-cut', afterFrames: 4 } },
  ]
  const expected = [
    { session: 'agent-1', sessionRequest: 2, fault: { kind: 'rate-limit', retryAfterMs: 10 } },
    { provider: 'anthropic', fault: { kind: 'overloaded' }, times: 2 },
    { request: 5, fault: { kind: 'stream-cut', afterFrames: 4 } },
  ]

  it('is a JSON array, an object with faults, or JSON lines, all read alike', () => {
    expect(parseFaultSchedule(JSON.stringify(rules, null, 2), 'f.json')).toEqual(expected)
    expect(parseFaultSchedule(JSON.stringify({ faults: rules }), 'f.json')).toEqual(expected)
    const lines = `${rules.map((rule) => JSON.stringify(rule)).join('\n\n')}\n`
    expect(parseFaultSchedule(lines, 'f.jsonl')).toEqual(expected)
    expect(parseFaultSchedule(JSON.stringify(rules[0]), 'one.json')).toEqual([expected[0]])
  })

  it.each([
    ['', /^f: holds no fault rule$/],
    ['[]', /^f: holds no fault rule$/],
    ['[{"fault": "429"},', /^f: not valid JSON: /],
    ['{"fault": "429"}\n{"fault": 429}', /^f:2: fault is required: "429;retry-after-ms=10" or \{"kind"/],
    [
      '{"fault": "429"}\nnot json',
      /^f:2: not valid JSON \(a schedule is a JSON array, or one JSON rule per line\)/,
    ],
    [
      '[{"fault": "429", "sesion": "a"}]',
      /^f: rule 1: unknown field "sesion" \(a rule has session, request,/,
    ],
    [
      '[{"fault": "429"}, {"fault": "429;times=2"}]',
      /^f: rule 2: fault: rate-limit takes retry-after-ms, retry-after, not "times" \(in a schedule, times is a field of the rule\)/,
    ],
    ['[{"fault": {"kind": "429"}}]', /^f: rule 1: fault.kind must be one of rate-limit, overloaded/],
    ['[{"fault": {"kind": "stream-cut"}}]', /^f: rule 1: stream-cut needs fault.afterFrames/],
    [
      '[{"fault": {"kind": "overloaded", "retryAfterMs": 5}}]',
      /^f: rule 1: fault: overloaded takes no field but kind, not "retryAfterMs"/,
    ],
    [
      '[{"fault": {"kind": "rate-limit", "retryAfterMs": 1.5}}]',
      /^f: rule 1: fault.retryAfterMs must be a whole number of milliseconds, not 1.5/,
    ],
    ['[{"fault": "500", "request": 0}]', /^f: rule 1: request must be a whole number from 1/],
    ['[{"fault": "500", "sessionRequest": "2"}]', /^f: rule 1: sessionRequest must be a whole number from 1/],
    [
      '[{"fault": "500", "provider": "openai"}]',
      /^f: rule 1: provider must be one of anthropic, openai-chat, openai-responses, deepseek, bedrock, gemini, xai, kimi, openrouter, mistral, qwen, glm, deepseek-anthropic, kimi-anthropic, glm-anthropic$/,
    ],
    ['[{"fault": "500", "session": ""}]', /^f: rule 1: session must be a session id, or \* for any session$/],
    ['[{"fault": "500", "times": 0}]', /^f: rule 1: times must be a whole number from 1$/],
    ['{"faults": [{"fault": "500"}], "extra": 1}', /^f: an object with "faults" holds nothing else$/],
    ['"429"', /^f: expected a JSON array of rules, \{"faults": \[\.\.\.\]\}, or one rule per line$/],
  ])('refuses %j with a line that names the rule and the problem', (text, message) => {
    expect(() => parseFaultSchedule(text, 'f')).toThrow(message)
  })

  it('checks rules given in process the same way', () => {
    expect(checkFaultRules([{ fault: { kind: 'server-error' } }])).toEqual([
      { fault: { kind: 'server-error' } },
    ])
    expect(() =>
      checkFaultRules([{ fault: { kind: 'server-error' } }, { fault: { kind: 'crash' } }]),
    ).toThrow(/^faults: rule 2: fault.kind must be one of/)
  })
})
