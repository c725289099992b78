import { describe, expect, it } from 'vitest'
import { codex } from './codex.ts'

const headers = {
  'user-agent': 'codex_exec/0.169.0 (Debian 12.0.0; x86_64)',
  'session-id': 'root',
  'thread-id': 'root',
}

describe("Codex's port", () => {
  it('reads its session, a spawned agent by its thread and a compaction by its turn metadata', () => {
    const body = { input: [] }
    expect(codex.read({ api: 'openai-responses', body, headers })).toEqual({
      agent: 'codex',
      version: '0.169.0',
      session: 'root',
      kind: 'main',
    })
    expect(
      codex.read({
        api: 'openai-responses',
        body,
        headers: { ...headers, 'thread-id': 'child', 'x-openai-subagent': 'collab_spawn' },
      }),
    ).toMatchObject({ session: 'root', key: 'child', kind: 'subagent' })
    expect(
      codex.read({
        api: 'openai-responses',
        body,
        headers: { ...headers, 'x-codex-turn-metadata': '{"request_kind":"compaction"}' },
      }),
    ).toMatchObject({ kind: 'compaction' })
  })

  it('does not read another client on the Responses API', () => {
    expect(
      codex.read({
        api: 'openai-responses',
        body: { input: [] },
        headers: { 'user-agent': 'OpenAI/JS 6.26.0' },
      }),
    ).toBeUndefined()
  })
})
