import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkSessionLog } from '../harness/store.ts'
import { runCli } from './testing.ts'

const start = { seq: 0, time: 0, type: 'session/start', data: { formatVersion: 1, sessionId: 's' } }
const turn = (seq: number, number: number) => ({ seq, time: seq, type: 'turn/start', data: { turn: number } })
const lines = (...events: unknown[]) => events.map((event) => `${JSON.stringify(event)}\n`).join('')

describe('checking every line of a session log', () => {
  it('finds nothing in a valid log and counts its events', () => {
    expect(checkSessionLog(lines(start, turn(1, 1)))).toEqual({ events: 2, problems: [] })
  })

  it('goes on past a bad line, naming each one and the seq gap the bad lines leave', () => {
    const content = `${lines(start)}{oops\n${lines({ ...turn(1, 1), data: { turn: 'one' } }, turn(2, 1))}`
    expect(checkSessionLog(content).problems).toEqual([
      { line: 2, reason: 'not valid JSON' },
      { line: 3, reason: 'data.turn must be a whole number of zero or more' },
      {
        line: 4,
        reason:
          'event seq 2 (turn/start): seq must be 1 (seqs are contiguous from 0) (later lines are checked for shape only)',
      },
    ])
  })

  it('checks the session’s own rules up to the first break, then shapes only', () => {
    const check = checkSessionLog(lines(turn(0, 1), turn(1, 1), { seq: 2, time: 2, type: 'nope', data: {} }))
    expect(check.problems).toEqual([
      { line: 1, reason: 'the first event must be session/start (later lines are checked for shape only)' },
      { line: 3, reason: 'unknown event type "nope" (not marked ignorable)' },
    ])
  })

  it('reports a torn last line apart from the problems', () => {
    const check = checkSessionLog(`${lines(start)}{"seq": 1, "ti`)
    expect(check).toEqual({ events: 1, problems: [], torn: { line: 2, text: '{"seq": 1, "ti' } })
  })
})

describe('cachelab validate', () => {
  it('exits 0 on a run’s session logs, with a summary', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-validate-'))
    expect(
      (await runCli(['run', '--scenario', 'append-only', '--provider', 'anthropic', '--out', out])).code,
    ).toBe(0)
    const result = await runCli(['validate', out])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      /^ok {7}.*sessions\/append-only\.default\.anthropic\.jsonl: [\d,]+ events$/m,
    )
    expect(result.stdout).toMatch(/^validated 1 session log: 1 valid, 0 invalid, [\d,]+ events\n$/m)
  })

  it('exits 1 on an invalid log, naming file:line of every problem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-validate-'))
    mkdirSync(join(dir, 'sessions'))
    const good = join(dir, 'sessions', 'good.jsonl')
    const bad = join(dir, 'sessions', 'bad.jsonl')
    writeFileSync(good, lines(start, turn(1, 1)))
    writeFileSync(bad, `${lines(start)}[]\n${lines({ ...turn(1, 1), seq: -1 })}`)
    writeFileSync(join(dir, 'notes.txt'), 'not a log')
    const result = await runCli(['validate', dir])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe(
      [
        `INVALID  ${bad}: 2 problems`,
        `  ${bad}:2: a log line must be a JSON object`,
        `  ${bad}:3: event.seq must be a whole number of zero or more`,
        `ok       ${good}: 2 events`,
        'validated 2 session logs: 1 valid, 1 invalid (2 problems), 3 events',
        '',
      ].join('\n'),
    )
  })

  it('exits 2 when there is nothing to read', async () => {
    expect((await runCli(['validate'])).code).toBe(2)
    const missing = await runCli(['validate', '/nonexistent/cachelab'])
    expect(missing).toMatchObject({
      code: 2,
      stderr: 'cachelab: /nonexistent/cachelab: no such file or directory\n',
    })
    const empty = mkdtempSync(join(tmpdir(), 'cachelab-validate-'))
    expect((await runCli(['validate', empty])).stderr).toContain('no session logs (*.jsonl) under')
  })

  it('calls an empty file invalid: a log opens with session/start', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cachelab-validate-')), 'empty.jsonl')
    writeFileSync(file, '')
    const result = await runCli(['validate', file])
    expect(result.code).toBe(1)
    expect(result.stdout).toContain(`${file}:1: empty: a session log opens with session/start`)
  })
})

describe('empty option values', () => {
  it('are a usage error, never the current folder', async () => {
    const result = await runCli(['import', 'x.jsonl', '--out', ''])
    expect(result).toMatchObject({ code: 2, stderr: 'cachelab: --out needs a value, not an empty string\n' })
  })

  it('and a simulate model the catalog lacks names the known ones', async () => {
    const result = await runCli(['simulate', '--provider', 'openai-chat', '--model', 'nope', '-'])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^cachelab: unknown openai-chat model "nope" \(known: gpt-5\.4, /)
  })
})
