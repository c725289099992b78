// opencode 1.18.33 against serve on the OpenAI-compatible wire: three turns (the later ones
// `--continue`d), the first with a tool call by a `*` rule, the second starting a `task` subagent. Its
// title request, which declares no tools, is a side conversation the rule leaves to the default; the main
// conversation starts at turn 1 and breaks nowhere. Its own database, found with no path, and its
// `opencode export` of the session import to the capture's per-request usage.

import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENT_DRIVERS, installedAgent } from '../../harness/loops/agents/index.ts'
import type { StepRow } from '../../reports/types.ts'
import {
  type AgentBench,
  type AgentSession,
  agentVersion,
  importAgentSession,
  startAgentBench,
  usageByConversation,
} from './bench.ts'

const execFileAsync = promisify(execFile)

let bench: AgentBench
let session: AgentSession
let rows: StepRow[]

beforeAll(async () => {
  bench = await startAgentBench([
    { session: '*', turn: 1, step: 1, tools: [{ name: 'glob', arguments: { pattern: '*' } }] },
    {
      session: '*',
      turn: 2,
      step: 1,
      tools: [
        {
          name: 'task',
          arguments: { description: 'Explore', prompt: 'List the files', subagent_type: 'general' },
        },
      ],
    },
  ])
  session = await bench.run('opencode', [
    { prompt: 'List the files' },
    { prompt: 'Start a subagent to explore', continues: true },
    { prompt: 'Read the notes', continues: true },
  ])
  rows = bench.rows()
})

afterAll(() => bench?.close())

const mainSession = () => bench.exchanges.find((exchange) => exchange.purpose === 'title')?.session

describe(`opencode ${agentVersion('opencode')} on the OpenAI-compatible wire, captured through serve`, () => {
  it('is served every request, none refused', () => {
    expect(
      bench.exchanges.filter((exchange) => exchange.status !== 200).map((exchange) => exchange.error),
    ).toEqual([])
  })

  it('puts its title request in a side conversation of the session', () => {
    const titles = bench.exchanges.filter((exchange) => exchange.purpose === 'title')
    expect(titles).toHaveLength(1)
    expect(titles[0]).toMatchObject({ kind: 'side' })
    expect(titles[0]?.session).toMatch(/^ses_/)
    expect(titles[0]?.response).not.toContain('glob')
  })

  it('starts its main conversation at turn 1, named by its session id, and breaks nowhere', () => {
    const main = rows.filter((row) => (row.conversationKind ?? 'main') === 'main')
    expect(new Set(main.map((row) => row.variant))).toEqual(new Set([mainSession()]))
    expect([...new Set(main.map((row) => row.turn))]).toEqual([1, 2, 3])
    const first = bench.exchanges.find((exchange) => exchange.kind === 'main')
    expect(first?.response).toContain('glob')
    expect(main.filter((row) => row.breakCause !== undefined)).toEqual([])
    expect(rows.every((row) => row.agent === `opencode/${agentVersion('opencode')}`)).toBe(true)
  })

  it('puts the task subagent in a conversation of its own under the session', () => {
    const subagents = rows.filter((row) => row.conversationKind === 'subagent')
    expect(subagents.length).toBeGreaterThan(0)
    expect(subagents.every((row) => row.variant.startsWith(`${mainSession()}.subagent-ses_`))).toBe(true)
  })
})

describe("opencode's own records import to the capture's usage", () => {
  // opencode does not record its title request (no message, no tokens): the one conversation the import
  // lacks, and the only one.
  const captured = () => {
    const usage = usageByConversation(rows)
    const titles = Object.keys(usage).filter((name) => name.startsWith(`${mainSession()}.side-title-`))
    expect(titles).toHaveLength(1)
    for (const name of titles) delete usage[name]
    return usage
  }

  it('from its database, found with no path', async () => {
    const imported = await importAgentSession(session.place)
    expect(imported.stdout).toContain('opencode.db')
    expect(usageByConversation(imported.rows)).toEqual(captured())
    expect(imported.rows.every((row) => row.agent === `opencode/${agentVersion('opencode')}`)).toBe(true)
    const subagent = imported.rows.find((row) => row.conversationKind === 'subagent')
    expect(subagent?.session).toBe(mainSession())
  })

  it('from `opencode export` of the session and of its subagent', async () => {
    const driver = AGENT_DRIVERS.opencode
    const bin = await installedAgent(driver)
    const { env } = driver.command(session.place, bench.urls, { prompt: '' }, {})
    const folder = mkdtempSync(join(tmpdir(), 'cachelab-opencode-export-'))
    const sessions = [
      mainSession(),
      ...new Set(
        rows
          .filter((row) => row.conversationKind === 'subagent')
          .map((row) => row.variant.split('.subagent-')[1]),
      ),
    ]
    const files: string[] = []
    for (const id of sessions) {
      const { stdout } = await execFileAsync(bin, ['export', id as string], {
        cwd: session.place.workspace,
        env: { PATH: process.env.PATH ?? '', HOME: session.place.home, ...env },
        maxBuffer: 64 * 1024 * 1024,
      })
      const file = join(folder, `${id}.json`)
      writeFileSync(file, stdout)
      files.push(file)
    }
    const imported = await importAgentSession(session.place, files)
    expect(usageByConversation(imported.rows)).toEqual(captured())
  })
})
