// `npm run soak -- --import-memory [--gb 1] [--target-mb 512]`: the peak memory of `cachelab import` and
// `cachelab calibrate` on one long Claude Code session, in two shapes: few large requests (tool results growing from 8 KB to
// 40 KB turn by turn, as a long session's do) and many small ones (300-byte results: the most requests,
// hence rows, per byte). For each, writes a transcript of about `--gb` GB into a temporary folder (a user
// turn carrying a tool result, then a response written as three assistant lines), imports and calibrates
// it in child processes, and prints each child's peak RSS (`Maximum resident set size` of `/usr/bin/time -v`) against
// the target (512 MiB by default).

import { spawnSync } from 'node:child_process'
import { createWriteStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const SESSION = '5e55a0de-0000-4000-8000-00000000b16e'

const WORDS =
  'cache prefix token session request answer model system review change build check test branch'.split(' ')

/** Text of about `bytes` bytes, different per turn. */
function filler(turn: number, bytes: number): string {
  const parts: string[] = []
  let length = 0
  let state = (turn * 7_919 + 1) >>> 0
  while (length < bytes) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    const word = `${WORDS[state % WORDS.length]}${(state >>> 8) % 100}`
    parts.push(word)
    length += word.length + 1
  }
  return parts.join(' ')
}

/**
 * Write one Claude Code session of about `bytes` bytes to `file`: turns of a user line with a tool
 * result and a response of three assistant lines (thinking, text, tool use) repeating the usage, output
 * as a running total. Returns the number of requests written.
 */
export async function writeLongClaudeCodeSession(
  file: string,
  bytes: number,
  shape: { growth: number; cap: number } = { growth: 8, cap: 40_000 },
): Promise<number> {
  const out = createWriteStream(file)
  const write = (line: string) =>
    new Promise<void>((done) => {
      if (out.write(`${line}\n`)) done()
      else out.once('drain', done)
    })
  const base = { isSidechain: false, sessionId: SESSION, version: '2.1.0', cwd: '/work/demo' }
  let written = 0
  let turn = 0
  let parent: string | null = null
  let cached = 3_000
  while (written < bytes) {
    turn += 1
    // A tool result of 8 KB early in the session, growing by `shape.growth` bytes a turn up to `shape.cap`.
    const size = Math.min(shape.cap, 8_000 + turn * shape.growth)
    const time = new Date(Date.UTC(2026, 0, 10, 10) + turn * 20_000).toISOString()
    const user = JSON.stringify({
      parentUuid: parent,
      ...base,
      type: 'user',
      message: {
        role: 'user',
        content:
          turn === 1
            ? `Start: ${filler(turn, size)}`
            : [{ type: 'tool_result', tool_use_id: `toolu_${turn - 1}`, content: filler(turn, size) }],
      },
      uuid: `u${turn}`,
      timestamp: time,
    })
    await write(user)
    written += user.length + 1
    parent = `u${turn}`
    const added = Math.round(size / 4)
    const blocks = [
      { type: 'thinking', thinking: filler(turn + 1, size / 8) },
      { type: 'text', text: filler(turn + 2, size / 4) },
      { type: 'tool_use', id: `toolu_${turn}`, name: 'Bash', input: { command: filler(turn + 3, 200) } },
    ]
    for (const [index, block] of blocks.entries()) {
      const line = JSON.stringify({
        parentUuid: parent,
        ...base,
        type: 'assistant',
        requestId: `req_${turn}`,
        message: {
          model: 'claude-sonnet-4-5',
          id: `msg_${turn}`,
          type: 'message',
          role: 'assistant',
          content: [block],
          stop_reason: index === 2 ? 'tool_use' : null,
          usage: {
            input_tokens: 4,
            cache_creation_input_tokens: added,
            cache_read_input_tokens: cached,
            output_tokens: 40 * (index + 1),
            cache_creation: { ephemeral_5m_input_tokens: added, ephemeral_1h_input_tokens: 0 },
          },
        },
        uuid: `a${turn}.${index}`,
        timestamp: time,
      })
      await write(line)
      written += line.length + 1
      parent = `a${turn}.${index}`
    }
    cached += added
  }
  await new Promise<void>((done, fail) => out.end((error?: Error | null) => (error ? fail(error) : done())))
  return turn
}

/** The commands measured, each reading the whole transcript. */
const COMMANDS = ['import', 'calibrate'] as const

/** Peak RSS in bytes of `node bin/cachelab.js COMMAND FILE --out DIR`, and its exit status. */
function peakOf(
  command: (typeof COMMANDS)[number],
  file: string,
  out: string,
): { rssBytes: number; status: number | null } {
  const cli = fileURLToPath(new URL('./cachelab.js', import.meta.url))
  const args = [cli, command, file, '--out', out]
  if (existsSync('/usr/bin/time')) {
    const run = spawnSync('/usr/bin/time', ['-v', process.execPath, ...args], { encoding: 'utf8' })
    const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr)?.[1]
    if (run.status !== 0) process.stderr.write(run.stderr.slice(-2_000))
    return { rssBytes: Number(kb ?? 0) * 1024, status: run.status }
  }
  process.stderr.write('soak: --import-memory reads the peak from GNU time: install /usr/bin/time\n')
  process.exit(2)
}

/** Write the transcript, import it, print the peak against the target; exit 1 past it. */
export async function importMemorySoak(gigabytes: number, targetMb: number): Promise<void> {
  if (!Number.isFinite(gigabytes) || gigabytes <= 0 || !Number.isFinite(targetMb) || targetMb <= 0) {
    process.stderr.write('soak: --gb and --target-mb must be positive numbers\n')
    process.exit(2)
  }
  let missed = false
  for (const [name, shape] of SHAPES) {
    const dir = mkdtempSync(join(tmpdir(), 'cachelab-import-memory-'))
    try {
      const file = join(dir, `${SESSION}.jsonl`)
      const began = performance.now()
      const requests = await writeLongClaudeCodeSession(file, gigabytes * 1e9, shape)
      const size = statSync(file).size
      process.stdout.write(
        `import memory (${name}): wrote ${(size / 1e9).toFixed(2)} GB, ${requests.toLocaleString('en-US')} requests, in ${((performance.now() - began) / 1000).toFixed(0)} s\n`,
      )
      for (const command of COMMANDS) {
        const started = performance.now()
        const peak = peakOf(command, file, join(dir, `out-${command}`))
        const mib = peak.rssBytes / 1024 / 1024
        const met = mib < targetMb && peak.status === 0
        if (!met) missed = true
        process.stdout.write(
          `import memory (${name}): cachelab ${command} peak RSS ${mib.toFixed(0)} MiB (/usr/bin/time -v), ${((performance.now() - started) / 1000).toFixed(0)} s, ` +
            `exit ${peak.status}; target under ${targetMb} MiB: ${met ? 'met' : 'MISSED'}\n`,
        )
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  process.exitCode = missed ? 1 : 0
}

/** The two transcript shapes: few large requests, many small ones. */
const SHAPES = [
  ['large requests', { growth: 8, cap: 40_000 }],
  ['small requests', { growth: 0, cap: 300 }],
] as const
