import { describe, expect, it } from 'vitest'
import { qwenCode } from './qwen-code.ts'

const read = (messages: unknown[]) =>
  qwenCode.read({
    api: 'openai-chat',
    body: { messages },
    headers: { 'user-agent': 'QwenCode/0.24.4 (linux; x64)' },
  })

describe("qwen-code's port", () => {
  it('tells memory extraction, the next-speaker check and compaction from a main turn', () => {
    expect(read([{ role: 'system', content: 'You are Qwen Code.' }])).toEqual({
      agent: 'qwen-code',
      version: '0.24.4',
      kind: 'main',
    })
    expect(
      read([{ role: 'system', content: 'You are now acting as the managed memory extraction subagent.' }]),
    ).toMatchObject({
      kind: 'side',
      purpose: 'memory',
    })
    expect(
      read([
        {
          role: 'user',
          content: 'Analyze *only* the content and structure of your immediately preceding response',
        },
      ]),
    ).toMatchObject({
      kind: 'side',
      purpose: 'next-speaker',
    })
    expect(
      read([{ role: 'user', content: 'You are the component that summarizes a conversation…' }]),
    ).toMatchObject({
      kind: 'compaction',
    })
  })
})
