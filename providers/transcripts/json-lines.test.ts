import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { type JsonLine, readJsonLines } from './json-lines.ts'
import type { ReadOptions, TranscriptProblem } from './types.ts'

const testdata = (name: string) => fileURLToPath(new URL(`testdata/${name}`, import.meta.url))
const scratch = () => mkdtempSync(join(tmpdir(), 'cachelab-lines-'))

async function linesOf(file: string, options: ReadOptions, chunkBytes?: number): Promise<JsonLine[]> {
  const lines: JsonLine[] = []
  for await (const line of readJsonLines(file, options, chunkBytes === undefined ? {} : { chunkBytes }))
    lines.push(line)
  return lines
}

const strict: ReadOptions = {
  lenient: false,
  onProblem: () => {
    throw new Error('a strict read reports no problem')
  },
}

function lenient(): ReadOptions & { problems: TranscriptProblem[] } {
  const problems: TranscriptProblem[] = []
  return { lenient: true, onProblem: (problem) => problems.push(problem), problems }
}

describe('the lines of a transcript file', () => {
  it('are its JSON values with their line numbers, blank lines skipped', async () => {
    const file = join(scratch(), 'a.jsonl')
    writeFileSync(file, '{"a":1}\n\n  \n[2]\r\n"three"')
    expect(await linesOf(file, strict)).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 4, value: [2] },
      { line: 5, value: 'three' },
    ])
  })

  it('fail on a line that is not one JSON value, naming file and line, unless lenient', async () => {
    const file = join(scratch(), 'torn.jsonl')
    writeFileSync(file, '{"a":1}\n{"b":"}{"}{"c":[3]}\n{"d":\nnull x\n{"e":5}\n')
    await expect(linesOf(file, strict)).rejects.toThrow(
      `${file}:2: 2 JSON values run together on one line (a lost newline)`,
    )
    const options = lenient()
    // Two records run together are both read; a torn one and a garbled one are skipped.
    expect(await linesOf(file, options)).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 2, value: { b: '}{' } },
      { line: 2, value: { c: [3] } },
      { line: 5, value: { e: 5 } },
    ])
    expect(options.problems).toEqual([
      { where: `${file}:2`, message: '2 JSON values run together on one line (a lost newline)' },
      { where: `${file}:3`, message: 'a JSON value that breaks off (a torn write)' },
      { where: `${file}:4`, message: 'not JSON' },
    ])
  })

  it('never quote the text of a line they cannot read', async () => {
    const file = join(scratch(), 'secret.jsonl')
    writeFileSync(file, '{"text": "my password is hunter2", oops}\n')
    await expect(linesOf(file, strict)).rejects.toThrow(/^(?!.*hunter2)/)
    const options = lenient()
    await linesOf(file, options)
    expect(JSON.stringify(options.problems)).not.toMatch(/hunter2/)
  })

  it('fail naming the file when it cannot be read', async () => {
    const file = join(scratch(), 'missing.jsonl')
    await expect(linesOf(file, lenient())).rejects.toThrow(`${file}:1: cannot read on`)
  })
})

describe('a zstd-compressed transcript', () => {
  // dsh-session.jsonl.zstd is dsh-session.jsonl in two zstd frames (lines 1–30, then the rest), as a log
  // appended to over time is, made with the zstd CLI 1.5.4 (Node 20 has no zstd compressor):
  // `head -30 dsh-session.jsonl > a; tail -n +31 dsh-session.jsonl > b;`
  // `zstd -q -19 a -o a.zst; zstd -q -19 b -o b.zst; cat a.zst b.zst > dsh-session.jsonl.zstd`
  it('reads the same lines as the file it compresses, fed to the decompressor in tiny chunks', async () => {
    const plain = await linesOf(testdata('dsh-session.jsonl'), strict)
    expect(plain.length).toBeGreaterThan(50)
    // Seven-byte chunks split frames, blocks and multi-byte characters (the fixture has "—").
    expect(await linesOf(testdata('dsh-session.jsonl.zstd'), strict, 7)).toEqual(plain)
    expect(await linesOf(testdata('dsh-session.jsonl.zstd'), strict)).toEqual(plain)
  })

  it('that breaks off fails, or under lenient keeps the lines before the break and reports it', async () => {
    const bytes = readFileSync(testdata('dsh-session.jsonl.zstd'))
    const file = join(scratch(), 'cut.jsonl.zstd')
    writeFileSync(file, bytes.subarray(0, bytes.length - 200))
    await expect(linesOf(file, strict)).rejects.toThrow(/cut\.jsonl\.zstd:\d+: cannot read on/)
    const options = lenient()
    const lines = await linesOf(file, options)
    // The first frame's 30 lines survive.
    expect(lines.at(-1)?.line).toBe(30)
    expect(options.problems).toHaveLength(1)
    expect(options.problems[0]?.where).toBe(`${file}:${(lines.at(-1)?.line ?? 0) + 1}`)
  })
})
