// One request once: an import of an agent's files counts a request copied into another session's file (a
// Claude Code `--fork-session`, a Codex fork) where it was made, reads the fork's own first request against
// what the parent left cached, and imports a Codex subagent spawned with its parent's history. The
// fixtures are sessions of ours against serve (Claude Code 2.1.328, Codex 0.169.0), the agents' own texts
// left out; the capture of each is quoted beside the assertions.

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type ImportOptions, importFiles } from './import.ts'
import { detectFormat, READERS } from './observed/transcripts/index.ts'
import type { ObservedRow } from './observed-rows.ts'

const testdata = (name: string) => join(import.meta.dirname, 'observed', 'transcripts', 'testdata', name)
const OPTIONS: ImportOptions = { readers: READERS, detect: detectFormat, format: 'auto', lenient: false }

async function imported(files: readonly string[]) {
  const entries: ObservedRow[] = []
  const result = await importFiles(files, OPTIONS, (entry) => entries.push(entry))
  return { ...result, entries }
}

/** Per session, its rows' input/read/write/output, in order. */
function usageBySession(entries: readonly ObservedRow[]): Record<string, string[]> {
  const sessions: Record<string, string[]> = {}
  for (const { row } of entries) {
    const usage = `${row.inputTokens}/${row.cacheReadTokens}/${row.cacheWriteTokens}/${row.outputTokens}`
    sessions[row.variant] = [...(sessions[row.variant] ?? []), usage]
  }
  return sessions
}

describe('importing a Claude Code session and its --fork-session, made after a /compact', () => {
  const PARENT = '558128f3-64ed-445d-9c75-7290f338a43e'
  const FORK = 'b472b2d3-e78a-4395-aa47-838c9f672403'
  const parent = testdata('claude-code-fork-parent.jsonl')
  const fork = testdata('claude-code-fork-child.jsonl')
  // The capture of the same run (serve --record): every request the agent sent but the compaction summary.
  const CAPTURED = {
    [PARENT]: ['11772/0/11769/34', '11786/11769/14/43', '11818/11783/32/34', '12176/9501/2672/34'],
    [FORK]: ['12189/12173/13/43', '12221/12186/32/34'],
  }

  it.each([
    ['the parent first', [parent, fork]],
    ['the fork first', [fork, parent]],
  ])(
    "counts each request once, where it was made, with %s: the fork's copies are no rows",
    async (_, files) => {
      const { entries, copies, requests } = await imported(files)
      expect(usageBySession(entries)).toEqual(CAPTURED)
      expect(requests).toBe(6)
      expect(copies).toEqual({ count: 2, first: `${fork}:8` })
    },
  )

  it("reads the fork's first own request against what the parent's last left cached, not as a session start", async () => {
    const { entries } = await imported([parent, fork])
    expect(entries.map(({ row, rewrite }) => `${row.variant.slice(0, 8)} ${rewrite.class}`)).toEqual([
      '558128f3 session-start',
      '558128f3 growth',
      '558128f3 growth',
      '558128f3 compaction',
      'b472b2d3 growth',
      'b472b2d3 growth',
    ])
  })

  it('names the rewrite after /compact history-summarized, as a capture of it does', async () => {
    const { entries } = await imported([parent])
    expect(entries[3]?.row).toMatchObject({ breakCause: 'history-summarized', lostTokens: 2314 })
  })

  it("lists the compaction the transcript does not hold as unrecorded, and charges the fork only with what it added to the parent's total", async () => {
    const { unrecorded } = await imported([fork, parent])
    // The capture's compaction request cost $0.0084546 (13,104 input: 11,783 read, 14 written, 40 output).
    expect(unrecorded).toEqual([
      {
        format: 'claude-code',
        session: PARENT,
        agentUsd: 0.0904482,
        recordedUsd: expect.closeTo(0.0819936, 9),
        tokens: { input: 1307, cacheRead: 11_783, cacheWrite: 14, output: 40 },
      },
    ])
    expect((unrecorded[0]?.agentUsd ?? 0) - (unrecorded[0]?.recordedUsd ?? 0)).toBeCloseTo(0.0084546, 9)
  })

  it("says nothing of a fork's total whose parent's is not at hand, rather than charge it with the parent's", async () => {
    const { unrecorded } = await imported([fork])
    expect(unrecorded).toEqual([])
  })

  it('counts once a request read again in a copy of its file that no reader marks, and keeps one that only shares its id', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'cachelab-import-copies-'))
    const copy = join(folder, 'copy.jsonl')
    writeFileSync(copy, readFileSync(parent))
    const twice = await imported([parent, copy])
    expect(usageBySession(twice.entries)).toEqual({ [PARENT]: CAPTURED[PARENT] })
    expect(twice.copies.count).toBe(4)
    // Another session whose requests a restarted simulator numbered alike, an hour later.
    const later = join(folder, 'later.jsonl')
    writeFileSync(
      later,
      readFileSync(parent, 'utf8')
        .replaceAll(PARENT, '7e57ca5e-0000-4000-8000-000000000002')
        .replaceAll('"2026-12-07T21:', '"2026-12-07T22:'),
    )
    const apart = await imported([parent, later])
    expect(apart.requests).toBe(8)
    expect(apart.copies.count).toBe(0)
  })
})

describe('importing a Codex 0.169 session that spawned a subagent with fork_context: true', () => {
  const ROOT = '01a2527c-7d2f-7090-b8fd-8e43c7ad45f0'
  const CHILD = '01a2527c-8ced-76e2-b6ec-fc0f97a63fec'

  it('imports the subagent under its root, its own requests as captured, none of the copied history twice', async () => {
    const { entries, copies } = await imported([
      testdata('codex-0169-fork-session.jsonl'),
      testdata('codex-0169-forked-subagent.jsonl'),
    ])
    const sessions = usageBySession(entries)
    // The capture: the subagent's two requests, 5,735 tokens cold, then 5,801 reading 5,632.
    expect(sessions[`${ROOT}.subagent-${CHILD}`]).toEqual(['5735/0/0/11', '5801/5632/0/2'])
    expect(sessions[ROOT]).toHaveLength(8)
    expect(copies.count).toBe(0)
    const child = entries.filter(({ row }) => row.variant === `${ROOT}.subagent-${CHILD}`)
    expect(child.map(({ row }) => [row.session, row.conversationKind])).toEqual([
      [ROOT, 'subagent'],
      [ROOT, 'subagent'],
    ])
  })
})
