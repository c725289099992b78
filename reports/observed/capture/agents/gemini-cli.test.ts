import { describe, expect, it } from 'vitest'
import { geminiCli } from './gemini-cli.ts'

const headers = { 'user-agent': 'GeminiCLI-tui/0.61.0/gemini-3.1-pro-preview (linux; x64; terminal)' }

describe("Gemini CLI's port", () => {
  it('tells its router, told by a system prompt that may start on a new line, from a main turn', () => {
    const router = {
      systemInstruction: { parts: [{ text: '\nYou are a specialized Task Routing AI.' }] },
      contents: [],
    }
    expect(geminiCli.read({ api: 'gemini-generate', body: router, headers })).toEqual({
      agent: 'gemini-cli',
      version: '0.61.0',
      kind: 'side',
      purpose: 'router',
    })
    expect(geminiCli.read({ api: 'gemini-generate', body: { contents: [] }, headers })?.kind).toBe('main')
  })

  it('reads no session: the wire carries none', () => {
    expect(
      geminiCli.read({ api: 'gemini-generate', body: { contents: [] }, headers })?.session,
    ).toBeUndefined()
  })
})
