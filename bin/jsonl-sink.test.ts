import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CachelabError } from '../harness/errors.ts'
import { openJsonlSink } from './jsonl-sink.ts'

const directory = () => mkdtempSync(join(tmpdir(), 'cachelab-sink-'))

function collect() {
  const messages: string[] = []
  return { messages, options: { label: '--log', onError: (message: string) => messages.push(message) } }
}

describe('a JSON Lines sink', () => {
  it('creates the file at open and appends one line per record', () => {
    const path = join(directory(), 'serve.jsonl')
    const sink = openJsonlSink(path, collect().options)
    expect(readFileSync(path, 'utf8')).toBe('')
    sink.append({ n: 1 })
    sink.append({ n: 2 })
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n{"n":2}\n')
    expect(sink.lost).toBe(0)
  })

  it.each([
    ['its directory is missing', (root: string) => join(root, 'missing', 'serve.jsonl'), 'no such directory'],
    ['it is a directory', (root: string) => root, 'it is a directory'],
    [
      'a parent is a file',
      (root: string) => {
        writeFileSync(join(root, 'file'), '')
        return join(root, 'file', 'serve.jsonl')
      },
      'a parent of it is not a directory',
    ],
  ])('refuses to open when %s, with an input error naming the path and the reason', (_, pathIn, reason) => {
    const path = pathIn(directory())
    const open = () => openJsonlSink(path, collect().options)
    expect(open).toThrow(CachelabError)
    expect(open).toThrow(`cannot write --log ${path}: ${reason}`)
  })

  it.skipIf(process.platform !== 'linux')(
    'refuses a kernel file, which opens for writing but takes no line',
    () => {
      expect(() => openJsonlSink('/proc/self/status', collect().options)).toThrow(
        'cannot write --log /proc/self/status: it is a kernel file (/proc, /sys), not a log; name a file on disk',
      )
    },
  )

  it.skipIf(process.getuid?.() === 0)('refuses a file it may not write (not checkable as root)', () => {
    const path = join(directory(), 'serve.jsonl')
    writeFileSync(path, '')
    chmodSync(path, 0o400)
    expect(() => openJsonlSink(path, collect().options)).toThrow('permission denied')
  })

  it('reports a later write error once, counts every lost record, and never throws', () => {
    const path = join(directory(), 'serve.jsonl')
    const { messages, options } = collect()
    const sink = openJsonlSink(path, options)
    sink.append({ n: 1 })
    rmSync(path)
    mkdirSync(path)
    expect(() => sink.append({ n: 2 })).not.toThrow()
    sink.append({ n: 3 })
    expect(messages).toEqual([
      `cannot write --log ${path}: it is a directory (records are being lost; this error is reported once)`,
    ])
    expect(sink.lost).toBe(2)
  })

  it('reports a different error as its own, and writes again once the path is writable', () => {
    const root = directory()
    const path = join(root, 'logs', 'serve.jsonl')
    mkdirSync(join(root, 'logs'))
    const { messages, options } = collect()
    const sink = openJsonlSink(path, options)
    rmSync(join(root, 'logs'), { recursive: true })
    sink.append({ n: 1 })
    mkdirSync(path, { recursive: true })
    sink.append({ n: 2 })
    expect(messages.map((message) => message.split(': ')[1])).toEqual([
      `no such directory ${join(root, 'logs')} (records are being lost; this error is reported once)`,
      'it is a directory (records are being lost; this error is reported once)',
    ])
    rmSync(path, { recursive: true })
    sink.append({ n: 3 })
    expect(readFileSync(path, 'utf8')).toBe('{"n":3}\n')
    expect(sink.lost).toBe(2)
  })

  it('counts a record that cannot be serialized as lost instead of throwing', () => {
    const { messages, options } = collect()
    const sink = openJsonlSink(join(directory(), 'serve.jsonl'), options)
    expect(() => sink.append({ big: 1n })).not.toThrow()
    expect(sink.lost).toBe(1)
    expect(messages).toHaveLength(1)
  })
})
