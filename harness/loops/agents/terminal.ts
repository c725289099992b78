// An agent's interactive interface (a TUI) driven as a user drives it: the agent's command run inside a
// pseudo-terminal that util-linux's `script` opens (on every Linux, no native module), keys written to
// it, its screen read back as text. For what only the TUI does (Claude Code's `/model`, which probes the
// new model before switching to it); headless steps are process.ts's.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import type { AgentCommand, AgentPlace } from './types.ts'

/** A running interactive agent. */
export interface AgentTerminal {
  /** Type a line and press Enter. */
  type(text: string): Promise<void>
  /** Press a key: Enter, Escape, or a control character. */
  press(key: 'enter' | 'escape' | 'ctrl-c'): void
  /** Wait until the screen printed since the last `mark` shows `pattern`; rejects past `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>
  /** Forget what was printed so far: the next `waitFor` looks only at what comes after. */
  mark(): void
  /** What was printed since the last mark, terminal controls removed. */
  screen(): string
  /** End the agent (Ctrl-C twice, then a kill) and resolve once it is gone. */
  close(): Promise<void>
}

/** Columns and rows of the terminal: wide enough that a prompt is never wrapped. */
const COLUMNS = 160
const ROWS = 50

const KEYS = { enter: '\r', escape: '\u001b', 'ctrl-c': '\u0003' } as const

/** A word for `sh -c`, quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}

const ESC = String.fromCharCode(27)
const BEL = String.fromCharCode(7)
/** OSC sequences (window titles, hyperlinks), ended by BEL or ST. */
const OSC = new RegExp(`${ESC}\\][^${BEL}${ESC}]*(?:${BEL}|${ESC}\\\\)`, 'g')
/** CSI sequences (colors, cursor moves). */
const CSI = new RegExp(`${ESC}\\[[0-9;?]*[ -/]*[@-~]`, 'g')
/** Two-character escapes. */
const SHORT = new RegExp(`${ESC}[@-Z\\\\-_]`, 'g')

/**
 * The text of a terminal's output, escape sequences removed; a cursor move stands where text used to be
 * (a TUI moves the cursor over spaces rather than print them), so it becomes a space.
 */
export function terminalText(output: string): string {
  return output.replace(OSC, '').replace(CSI, ' ').replace(SHORT, '').replaceAll('\r', '')
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Start `bin` with `command` in a pseudo-terminal in the place's workspace, with the same clean
 * environment a headless step gets (the scratch home, the driver's variables, PATH) and a color terminal.
 */
export function startTerminal(bin: string, place: AgentPlace, command: AgentCommand): AgentTerminal {
  const line = [bin, ...command.args].map(shellWord).join(' ')
  const child: ChildProcessWithoutNullStreams = spawn(
    'script',
    [
      '--quiet',
      '--flush',
      '--return',
      '--command',
      `stty cols ${COLUMNS} rows ${ROWS}; exec ${line}`,
      '/dev/null',
    ],
    {
      cwd: place.workspace,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: place.home,
        TERM: 'xterm-256color',
        COLUMNS: String(COLUMNS),
        LINES: String(ROWS),
        ...command.env,
      },
    },
  )
  let output = ''
  let exited = false
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8')
  })
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8')
  })
  const gone = new Promise<void>((resolve) =>
    child.on('close', () => {
      exited = true
      resolve()
    }),
  )
  const terminal: AgentTerminal = {
    async type(text) {
      child.stdin.write(text)
      // A TUI reads a paste and the Enter after it apart only when they arrive apart.
      await pause(400)
      child.stdin.write(KEYS.enter)
    },
    press(key) {
      child.stdin.write(KEYS[key])
    },
    async waitFor(pattern, timeoutMs = 120_000) {
      const started = Date.now()
      while (!pattern.test(terminalText(output))) {
        if (exited)
          throw new Error(`the agent exited before showing ${pattern}: ${terminal.screen().slice(-800)}`)
        if (Date.now() - started > timeoutMs)
          throw new Error(
            `the agent did not show ${pattern} in ${timeoutMs} ms: ${terminal.screen().slice(-800)}`,
          )
        await pause(100)
      }
    },
    mark() {
      output = ''
    },
    screen: () => terminalText(output),
    async close() {
      if (!exited) {
        child.stdin.write(KEYS['ctrl-c'])
        await pause(300)
        child.stdin.write(KEYS['ctrl-c'])
        const killer = setTimeout(() => child.kill('SIGKILL'), 5_000)
        await gone
        clearTimeout(killer)
      }
    },
  }
  return terminal
}
