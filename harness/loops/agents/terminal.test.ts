import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startTerminal, terminalText } from './terminal.ts'

/** A tiny interactive program: a colored prompt, then each line it reads echoed back upper-cased. */
const PROGRAM = `
const tty = require('node:tty')
process.stdout.write(tty.isatty(0) ? '\\u001b[1mready\\u001b[0m\\u001b[2C>\\n' : 'no terminal\\n')
process.stdin.setRawMode?.(true)
let line = ''
process.stdin.on('data', (data) => {
  for (const char of data.toString()) {
    if (char === '\\u0003') process.exit(0)
    if (char === '\\r') { process.stdout.write('\\u001b]0;title\\u0007got ' + line.toUpperCase() + '\\n'); line = '' }
    else line += char
  }
})
`

describe('an agent in a terminal', () => {
  it('runs in a real terminal, takes typed lines and shows what it printed as text', async () => {
    const place = { home: mkdtempSync(join(tmpdir(), 'cachelab-tty-')), workspace: tmpdir() }
    const terminal = startTerminal(process.execPath, place, { args: ['-e', PROGRAM], env: {} })
    try {
      await terminal.waitFor(/ready\s+>/)
      terminal.mark()
      await terminal.type('hello there')
      await terminal.waitFor(/got HELLO THERE/)
      expect(terminal.screen()).not.toContain('title')
    } finally {
      await terminal.close()
    }
  })

  it('reads escape sequences out of the text, a cursor move as a space', () => {
    const esc = String.fromCharCode(27)
    expect(terminalText(`${esc}[1mSet${esc}[1Cmodel${esc}[0m\r\n${esc}]0;t${String.fromCharCode(7)}ok`)).toBe(
      ' Set model \nok',
    )
  })
})
