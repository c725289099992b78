import { describe, expect, it } from 'vitest'
import { copilot } from './copilot.ts'

const read = (headers: Record<string, string>) =>
  copilot.read({
    api: 'openai-responses',
    body: { instructions: 'You are the GitHub Copilot CLI.', input: [] },
    headers: { 'user-agent': 'OpenAI/JS 5.20.1', ...headers },
  })

describe("Copilot CLI's port", () => {
  it('knows its requests by x-initiator, and their kind by the interaction type where one is sent', () => {
    expect(read({ 'x-initiator': 'user', 'x-interaction-type': 'conversation-user' })).toEqual({
      agent: 'copilot',
      kind: 'main',
    })
    expect(read({ 'x-initiator': 'agent', 'x-interaction-type': 'conversation-subagent' })).toEqual({
      agent: 'copilot',
      kind: 'subagent',
    })
    expect(read({ 'x-initiator': 'agent', 'x-interaction-type': 'conversation-compaction' })).toEqual({
      agent: 'copilot',
      kind: 'compaction',
      purpose: 'summary',
    })
    expect(read({ 'x-initiator': 'agent', 'x-interaction-type': 'conversation-background' })).toMatchObject({
      kind: 'side',
    })
    // A follow-up sends no interaction type: the conversation tracker tells it by what it continues.
    expect(read({ 'x-initiator': 'agent' })).toEqual({ agent: 'copilot' })
  })

  it("leaves the SDKs' other users alone", () => {
    expect(read({})).toBeUndefined()
    expect(read({ 'x-initiator': 'someone' })).toBeUndefined()
  })
})
