import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CachelabError } from '../../../harness/errors.ts'
import { type JsonRecord, parseLine, readJsonRecords, splitJsonValues } from './lines.ts'
import type { TranscriptProblem } from './types.ts'

const testdata = (name: string) => join(import.meta.dirname, 'testdata', name)
const SAMPLES = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'fixtures', 'transcripts')

async function readAll(file: string, lenient: boolean, maxLineBytes?: number) {
  const records: JsonRecord[] = []
  const problems: TranscriptProblem[] = []
  let error: unknown
  try {
    for await (const record of readJsonRecords(
      file,
      { lenient, onProblem: (p) => problems.push(p) },
      maxLineBytes === undefined ? {} : { maxLineBytes },
    ))
      records.push(record)
  } catch (caught) {
    error = caught
  }
  return { records, problems, error }
}

const numbers = (records: JsonRecord[]) => records.map((record) => [record.line, record.value.n])

function temporaryFile(name: string, content: string | Buffer): string {
  const file = join(mkdtempSync(join(tmpdir(), 'cachelab-lines-')), name)
  writeFileSync(file, content)
  return file
}

describe('splitJsonValues', () => {
  it('splits objects written back to back', () => {
    expect(splitJsonValues('{"a":1}{"b":[2,{"c":3}]}')).toEqual(['{"a":1}', '{"b":[2,{"c":3}]}'])
  })

  it('does not split at braces inside strings, escaped quotes included', () => {
    expect(splitJsonValues('{"a":"}{\\"}{"}{"b":2}')).toEqual(['{"a":"}{\\"}{"}', '{"b":2}'])
  })

  it('gives nothing for text that ends inside a value or holds something between values', () => {
    expect(splitJsonValues('{"a":1}{"b":')).toBeUndefined()
    expect(splitJsonValues('{"a":1} x {"b":2}')).toBeUndefined()
  })
})

describe('parseLine', () => {
  it('reads one object, two objects on one line, and a blank line', () => {
    expect(parseLine('{"a":1}')).toEqual({ kind: 'objects', values: [{ a: 1 }] })
    expect(parseLine('{"a":1}{"b":2}')).toEqual({ kind: 'objects', values: [{ a: 1 }, { b: 2 }] })
    expect(parseLine('  ')).toEqual({ kind: 'blank' })
  })

  it('calls a JSON value that is not an object, or broken JSON, corrupt', () => {
    expect(parseLine('[1,2]')).toEqual({ kind: 'corrupt', reason: 'not a JSON object' })
    expect(parseLine('{"a":').kind).toBe('corrupt')
  })

  it('quotes none of the line in its reason (a line holds what the user wrote)', () => {
    expect(parseLine('private words')).toEqual({ kind: 'corrupt', reason: "not JSON (Unexpected token 'p')" })
  })
})

describe('readJsonRecords', () => {
  it('fails on the first damaged line, naming file and line, after the records before it', async () => {
    const file = testdata('lines-damaged.jsonl')
    const { records, error } = await readAll(file, false)
    expect(numbers(records)).toEqual([[1, 1]])
    expect(error).toBeInstanceOf(CachelabError)
    expect((error as CachelabError).kind).toBe('input')
    expect((error as CachelabError).message).toBe(
      `${file}:2: 2 JSON values run together on one line (a lost newline) (--lenient skips such lines and counts them)`,
    )
  })

  it('when lenient, reports the corrupt line and the torn last line and reads on', async () => {
    const file = testdata('lines-damaged.jsonl')
    const { records, problems, error } = await readAll(file, true)
    expect(error).toBeUndefined()
    expect(numbers(records)).toEqual([
      [1, 1],
      [2, 2],
      [2, 3],
      [5, 5],
    ])
    expect(problems.map((problem) => problem.where)).toEqual([`${file}:2`, `${file}:4`, `${file}:6`])
    expect(problems[2]?.message).toMatch(/^torn last line/)
  })

  it('cuts a line past the limit to a problem at its line, and reads the lines around it whole', async () => {
    const long = `{"n":2,"text":"${'x'.repeat(200_000)}"}`
    const file = temporaryFile('long.jsonl', `{"n":1}\n${long}\n{"n":3}\n`)
    const strict = await readAll(file, false, 2 ** 16)
    expect((strict.error as CachelabError).message).toMatch(
      new RegExp(`^${file}:2: a line longer than 0.0625 MiB: not a transcript record`),
    )
    const lenient = await readAll(file, true, 2 ** 16)
    expect(numbers(lenient.records)).toEqual([
      [1, 1],
      [3, 3],
    ])
    expect(lenient.problems.map((problem) => problem.where)).toEqual([`${file}:2`])
    // Under the limit the same line is a record.
    expect(numbers((await readAll(file, false, 2 ** 20)).records)).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ])
  })

  it('reads a last line without a newline when it is whole', async () => {
    const file = temporaryFile('whole.jsonl', '{"n":1}\n{"n":2}')
    const { records, problems } = await readAll(file, false)
    expect(numbers(records)).toEqual([
      [1, 1],
      [2, 2],
    ])
    expect(problems).toEqual([])
  })

  it('calls a broken last line that ends in a newline corrupt, not torn', async () => {
    const file = temporaryFile('broken.jsonl', '{"n":1}\n{"n":\n')
    const { problems } = await readAll(file, true)
    expect(problems).toHaveLength(1)
    expect(problems[0]?.message).toMatch(/^not JSON/)
  })

  it('decompresses a .zstd file as it streams', async () => {
    const { records } = await readAll(testdata('lines.jsonl.zstd'), true)
    expect(numbers(records)).toEqual([
      [1, 1],
      [2, 2],
      [2, 3],
      [3, 4],
    ])
  })

  it('reports a cut-off zstd stream as a problem at the line it broke in', async () => {
    const whole = readFileSync(testdata('lines.jsonl.zstd'))
    const file = temporaryFile('cut.jsonl.zstd', whole.subarray(0, 12))
    const strict = await readAll(file, false)
    expect((strict.error as CachelabError).message).toMatch(
      new RegExp(`^${file}:1: the zstd stream is damaged`),
    )
    const lenient = await readAll(file, true)
    expect(lenient.error).toBeUndefined()
    expect(lenient.problems).toHaveLength(1)
  })

  it('fails on a file it cannot open even when lenient', async () => {
    const { error } = await readAll(join(tmpdir(), 'cachelab-no-such-transcript.jsonl'), true)
    expect((error as CachelabError).kind).toBe('input')
    expect((error as CachelabError).message).toMatch(/cannot read \(ENOENT\)$/)
  })

  it('reads the same records and problems whatever the chunk size, its buffer read into again', async () => {
    const file = temporaryFile(
      'chunks.jsonl',
      '{"n":1,"text":"é→✓"}\r\n{"n":2}{"n":3}\n\n{"n":4,"a":[1,{"b":"\\"}"}]}\r{"n":\n{"n":5}',
    )
    const read = async (chunkBytes: number) => {
      const records: JsonRecord[] = []
      const problems: TranscriptProblem[] = []
      for await (const record of readJsonRecords(
        file,
        { lenient: true, onProblem: (problem) => problems.push(problem) },
        { chunkBytes },
      ))
        records.push(record)
      return { records, problems }
    }
    const whole = await read(2 ** 20)
    expect(numbers(whole.records)).toEqual([
      [1, 1],
      [2, 2],
      [2, 3],
      [4, 4],
      [6, 5],
    ])
    for (const chunkBytes of [1, 2, 3, 5, 7, 16]) expect(await read(chunkBytes)).toEqual(whole)
  })

  it('gives two files read at once a buffer each', async () => {
    const first = temporaryFile('first.jsonl', Array.from({ length: 50 }, (_, n) => `{"n":${n}}`).join('\n'))
    const second = temporaryFile(
      'second.jsonl',
      Array.from({ length: 50 }, (_, n) => `{"n":${n + 100}}`).join('\n'),
    )
    const options = { lenient: false, onProblem: () => {} }
    const a = readJsonRecords(first, options, { chunkBytes: 16 })[Symbol.asyncIterator]()
    const b = readJsonRecords(second, options, { chunkBytes: 16 })[Symbol.asyncIterator]()
    const seen: number[] = []
    for (let step = 0; step < 50; step += 1)
      for (const records of [a, b]) {
        const next = await records.next()
        if (!next.done) seen.push(next.value.value.n as number)
      }
    expect(seen.filter((n) => n < 100)).toEqual(Array.from({ length: 50 }, (_, n) => n))
    expect(seen.filter((n) => n >= 100)).toEqual(Array.from({ length: 50 }, (_, n) => n + 100))
  })

  it('can be left early without reading the rest', async () => {
    const seen: number[] = []
    for await (const record of readJsonRecords(testdata('lines-damaged.jsonl'), {
      lenient: false,
      onProblem: () => {},
    })) {
      seen.push(record.line)
      break
    }
    expect(seen).toEqual([1])
  })
})

describe.skipIf(!existsSync(SAMPLES))('readJsonRecords on the real samples', () => {
  it('reports the pi lines that lost their newline, and reads both of their objects', async () => {
    const strict = await readAll(join(SAMPLES, 'pi-badlogic-compact.jsonl'), false)
    expect((strict.error as CachelabError).message).toMatch(
      /pi-badlogic-compact\.jsonl:1013: 2 JSON values run together/,
    )
    const compact = await readAll(join(SAMPLES, 'pi-badlogic-compact.jsonl'), true)
    expect(compact.error).toBeUndefined()
    expect(compact.problems.map((problem) => problem.where)).toEqual([expect.stringMatching(/:1013$/)])
    expect(
      compact.records.filter((record) => record.line === 1013).map((record) => record.value.type),
    ).toEqual(['message', 'compaction'])
    const session = await readAll(join(SAMPLES, 'pi-badlogic-session-2025-12-17.jsonl'), true)
    expect(session.records.filter((record) => record.line === 440)).toHaveLength(2)
    expect(session.records).toHaveLength(464)
  })
})
