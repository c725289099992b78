import { createInterface } from 'node:readline'
import { Readable } from 'node:stream'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LineSplitter } from './line-bytes.ts'

/** The lines of `chunks` as the splitter gives them. */
function splitLines(chunks: Buffer[]): string[] {
  const splitter = new LineSplitter()
  const lines = chunks.flatMap((chunk) => splitter.push(chunk))
  const last = splitter.end()
  return (last === undefined ? lines : [...lines, last]).map((line) => line.toString('utf8'))
}

/** The lines of `chunks` as node:readline gives them, the way the reader used to read them. */
async function readlineLines(chunks: Buffer[]): Promise<string[]> {
  const lines: string[] = []
  const reader = createInterface({ input: Readable.from(chunks), crlfDelay: Number.POSITIVE_INFINITY })
  for await (const line of reader) lines.push(line)
  return lines
}

describe('LineSplitter', () => {
  it('splits at \\n, \\r\\n and a lone \\r, keeping empty lines and a last line without a break', () => {
    expect(splitLines([Buffer.from('a\nb\r\nc\rd\n\ne')])).toEqual(['a', 'b', 'c', 'd', '', 'e'])
  })

  it('joins a line and a multi-byte character split across chunks', () => {
    const bytes = Buffer.from('{"é":"→"}\n{"b":2}')
    expect(splitLines([bytes.subarray(0, 3), bytes.subarray(3, 8), bytes.subarray(8)])).toEqual([
      '{"é":"→"}',
      '{"b":2}',
    ])
  })

  it('counts a \\r\\n split across two chunks as one break', () => {
    expect(splitLines([Buffer.from('a\r'), Buffer.from('\nb')])).toEqual(['a', 'b'])
  })

  it('gives the lines readline gives, however the bytes are chunked', async () => {
    const text = fc.stringMatching(/^[ab\r\né{}"]{0,40}$/)
    await fc.assert(
      fc.asyncProperty(text, fc.array(fc.nat(40), { maxLength: 6 }), async (content, cuts) => {
        const bytes = Buffer.from(content)
        const offsets = [...new Set(cuts.map((cut) => Math.min(cut, bytes.length)))].sort((a, b) => a - b)
        const chunks = [0, ...offsets].map((start, index) =>
          bytes.subarray(start, offsets[index] ?? bytes.length),
        )
        expect(splitLines(chunks)).toEqual(await readlineLines(chunks))
      }),
    )
  })
})
