import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { detectFormat } from './detect.ts'
import { readKilo } from './kilo.ts'
import { readOpencode } from './opencode.ts'
import type { ObservedRequest, TranscriptProblem, TranscriptReader } from './types.ts'

const testdata = (name: string) => join(import.meta.dirname, 'testdata', name)

/**
 * Kilo's database of the agents bench's session (testdata/kilo-session.sql, made by Kilo 7.7.7 against serve),
 * as a user's home holds it, with its sessions' directory moved to a workspace whose `kilo.json` names the
 * server's provider package as the bench's does.
 */
function kiloHome(): { database: string; workspace: string } {
  const home = mkdtempSync(join(tmpdir(), 'cachelab-kilo-home-'))
  const workspace = join(home, 'workspace')
  mkdirSync(workspace)
  writeFileSync(
    join(workspace, 'kilo.json'),
    '{ "provider": { "cachelab": { "npm": "@ai-sdk/openai-compatible" } } }\n',
  )
  const folder = join(home, '.local', 'share', 'kilo')
  mkdirSync(folder, { recursive: true })
  const database = join(folder, 'kilo.db')
  const writer = new Database(database)
  // The dump leaves out the tables Kilo's keys point at (`project`).
  writer.pragma('foreign_keys = off')
  writer.exec(readFileSync(testdata('kilo-session.sql'), 'utf8'))
  writer.prepare('update session set directory = ?').run(workspace)
  writer.close()
  return { database, workspace }
}

async function readAll(reader: TranscriptReader, file: string) {
  const requests: ObservedRequest[] = []
  const notes: TranscriptProblem[] = []
  for await (const request of reader(file, {
    lenient: false,
    onProblem: (problem) => {
      throw new Error(problem.message)
    },
    onNote: (note) => notes.push(note),
  }))
    requests.push(request)
  return { requests, notes }
}

const usageOf = ({ usage }: ObservedRequest) =>
  `${usage.input}/${usage.cacheRead ?? 0}/${usage.cacheWrite ?? 0}/${usage.output}`

/** Each conversation's requests as `model input/read/write/output`, as the agents bench lists a capture's. */
function usageByConversation(requests: readonly ObservedRequest[]): Record<string, string[]> {
  const found: Record<string, string[]> = {}
  for (const request of requests) {
    const list = found[request.session] ?? []
    list.push(`${request.model} ${usageOf(request)}`)
    found[request.session] = list
  }
  return found
}

describe("Kilo Code's database", () => {
  it("is detected as Kilo's, not opencode's, by the tables of its own", async () => {
    expect(await detectFormat(kiloHome().database)).toBe('kilo')
  })

  it('imports to what the capture of the same session recorded, request for request', async () => {
    const { requests, notes } = await readAll(readKilo, kiloHome().database)
    const captured = JSON.parse(readFileSync(testdata('kilo-session.capture.json'), 'utf8'))
    expect(usageByConversation(requests)).toEqual(captured)
    expect(notes).toEqual([])
    expect(new Set(requests.map((request) => request.format))).toEqual(new Set(['kilo']))
    expect(new Set(requests.map((request) => request.agent))).toEqual(new Set(['kilo/7.7.7']))
    expect(new Set(requests.map((request) => request.provider))).toEqual(new Set(['openai-chat']))
    const subagent = requests.filter((request) => request.kind === 'subagent')
    expect(subagent.length).toBe(2)
    const main = Object.keys(captured).find((name) => !name.includes('.subagent-'))
    expect(subagent.every((request) => request.parent === main)).toBe(true)
    // The compact command is a user message of its own in the transcript, a turn the wire does not show.
    expect(requests.filter((request) => request.kind === undefined).map((request) => request.turn)).toEqual([
      1, 1, 3, 3,
    ])
    const compaction = requests.filter((request) => request.kind === 'compaction')
    expect(compaction.map((request) => request.session)).toEqual([`${main}.compaction-1`])
    const afterCompaction = requests.find((request) => request.kind === undefined && request.turn === 3)
    expect(afterCompaction?.events).toEqual([{ kind: 'compaction', detail: 'kilo summary' }])
  })

  it("names its provider's package by Kilo's config files, which opencode's reader does not read", async () => {
    const { requests, notes } = await readAll(readOpencode, kiloHome().database)
    expect(requests).toEqual([])
    expect(notes.map((note) => note.message)).toEqual([
      expect.stringMatching(/^7 requests to opencode provider cachelab skipped/),
    ])
  })
})

describe("Kilo Code's `kilo export` of a session", () => {
  // testdata/kilo-export.json: one turn of Kilo 7.7.7 against serve, a file read then an answer; the
  // capture of the same session recorded 11561/11520/0/11 and 11619/11520/0/2.
  const exported = () => {
    const { workspace } = kiloHome()
    const value = JSON.parse(readFileSync(testdata('kilo-export.json'), 'utf8'))
    value.info.directory = workspace
    const file = join(workspace, 'session.json')
    writeFileSync(file, JSON.stringify(value, null, 2))
    return file
  }

  it("has opencode's shape to the field: detection takes it for opencode's", async () => {
    expect(await detectFormat(exported())).toBe('opencode')
  })

  it("reads as Kilo's, to the capture's usage, when named so", async () => {
    const { requests } = await readAll(readKilo, exported())
    expect(
      requests.map((request) => `${request.agent} ${request.turn}.${request.step} ${usageOf(request)}`),
    ).toEqual(['kilo/7.7.7 1.1 11561/11520/0/11', 'kilo/7.7.7 1.2 11619/11520/0/2'])
  })
})
