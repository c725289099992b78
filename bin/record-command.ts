// `cachelab record [--out DIR] [--baseline DIR] -- COMMAND...`: serve around any test run. serve starts in
// process on a free loopback port recording to DIR/capture, the command runs with every vendor's base URL
// pointing at it, serve stops whatever happens to the command, and the capture becomes DIR's report,
// gated against the baseline when one is named (notes/2026-12-02-record.md).

import { existsSync } from 'node:fs'
import { basename, isAbsolute, join, relative, resolve } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import {
  type CommandOutcome,
  commandEnvironment,
  commandExitCode,
  requireRunnable,
  runCommand,
  shownCommand,
} from '../providers/mock/around.ts'
import { breakLines, breaksOf } from '../reports/breaks.ts'
import { CAPTURE_SCENARIO } from '../reports/capture-rows.ts'
import { runStamp } from '../reports/run-folder.ts'
import { writeRunFiles } from '../scenarios/run-files.ts'
import { parse } from './args.ts'
import { check, readRunDirectory } from './check.ts'
import { type Reporter, reportersOption, writeReports } from './check-reporters.ts'
import { RECORD_FLAGS, SERVE_FLAGS_AROUND } from './commands.ts'
import { reportCapture } from './report.ts'
import { serveCommand } from './serve-command.ts'

const USAGE =
  'cachelab record [--out DIR] [--baseline DIR [--reporter NAME[=FILE],...]] [serve flags] -- COMMAND [ARGS...]'

export async function recordCommand(argv: string[]): Promise<number> {
  const split = argv.indexOf('--')
  const command = split === -1 ? [] : argv.slice(split + 1)
  const { values, positionals } = parse(split === -1 ? argv : argv.slice(0, split), RECORD_FLAGS, true)
  const [program, ...args] = command
  if (program === undefined || positionals.length > 0)
    throw new CachelabError('usage', `record needs a command after --: ${USAGE}`)
  const tolerance = values.tolerance === undefined ? undefined : Number(values.tolerance)
  if (tolerance !== undefined && (!Number.isFinite(tolerance) || tolerance < 0))
    throw new CachelabError(
      'usage',
      `--tolerance takes percentage points (a number >= 0), not ${values.tolerance}`,
    )
  const reporters = recordReporters(values.reporter, values.baseline, process.env)
  requireRunnable(program, process.env)
  const outDir = resolve(values.out ?? join('reports', 'out', `record-${runStamp()}`))
  const captureDir = join(outDir, 'capture')
  // Refused before anything starts: the gate would have nothing to compare with, or nothing new to read.
  if (values.baseline !== undefined) {
    if (resolve(values.baseline) === outDir)
      throw new CachelabError(
        'usage',
        '--out and --baseline name the same folder: the report would replace its baseline',
      )
    if (readRunDirectory(values.baseline, 'baseline', {}).summary.length === 0)
      throw new CachelabError(
        'input',
        `${join(values.baseline, 'summary.csv')} has no rows: nothing to check`,
      )
  }
  if (existsSync(join(captureDir, 'capture.json')))
    throw new CachelabError(
      'usage',
      `--out ${shown(outDir)} already holds a recording (capture/capture.json): choose a new --out`,
    )

  let outcome: CommandOutcome | undefined
  await serveCommand(serveArguments(values, captureDir), undefined, {
    print: () => {},
    hold: async (server, capture) => {
      process.stderr.write(
        `cachelab record: serving on ${server.url} (${values.upstream ?? 'sim'}), recording to ${shown(captureDir)}; running ${shownCommand(command, process.env)}\n`,
      )
      try {
        outcome = await runCommand(
          program,
          args,
          commandEnvironment(server, process.env, values.upstream ?? 'sim'),
        )
      } catch (error) {
        // The command never ran: nothing was recorded, and the same --out may be tried again.
        capture?.discard()
        throw error
      }
    },
  })
  const exitCode = outcome === undefined ? 0 : commandExitCode(outcome)

  const report = reportCapture(captureDir, CAPTURE_SCENARIO)
  writeRunFiles(outDir, { runId: report.runId, rows: report.rows, scenarios: [], writer: 'record' })
  for (const where of report.torn)
    process.stderr.write(`cachelab record: ${where}: torn last line (not read)\n`)
  const requests = report.rows.filter((row) => row.ok).length
  const conversations = new Set(report.rows.map((row) => row.variant)).size
  // Each break with what changed there, as report prints them; against a baseline, the gate's lines name
  // the new and grown ones with their changes instead.
  const breaks = values.baseline === undefined ? breaksOf(report.rows) : []
  if (breaks.length > 0)
    process.stdout.write(`${['breaks:', ...breaks.flatMap((entry) => breakLines(entry))].join('\n')}\n`)
  let verdict = 'no baseline'
  let gateCode = 0
  if (values.baseline !== undefined) {
    const result = check({
      baseline: values.baseline,
      run: outDir,
      ...(tolerance !== undefined ? { tolerancePoints: tolerance } : {}),
    })
    writeReports(result.gate, reporters, {
      notices: result.notices,
      refresh: result.refresh,
      stepSummary: process.env.GITHUB_STEP_SUMMARY,
    })
    verdict = result.passed
      ? `holds against ${values.baseline}`
      : `fails against ${values.baseline} (${result.gate.failures.length} ${result.gate.failures.length === 1 ? 'failure' : 'failures'})`
    gateCode = result.passed ? 0 : 1
  }
  const ended = outcome?.signal != null ? `was ended by ${outcome.signal}` : `exited ${outcome?.code ?? 0}`
  process.stdout.write(
    `cachelab record: ${basename(program)} ${ended}; ${requests} ${requests === 1 ? 'request' : 'requests'} captured in ${conversations} ${conversations === 1 ? 'conversation' : 'conversations'}; report ${shown(join(outDir, 'report.html'))}; gate: ${verdict}\n`,
  )
  return exitCode !== 0 ? exitCode : gateCode
}

/** A path as printed: relative to the current folder when inside it, else absolute. */
function shown(path: string): string {
  const inside = relative(process.cwd(), path)
  return inside === '' ? '.' : inside.startsWith('..') || isAbsolute(inside) ? path : inside
}

/** serve's argument list: a free loopback port, recording into the capture folder, and the flags passed on. */
function serveArguments(values: Record<string, string | boolean | undefined>, captureDir: string): string[] {
  const argv = ['--port', '0', '--host', '127.0.0.1', '--record', captureDir]
  for (const [name, spec] of Object.entries(SERVE_FLAGS_AROUND)) {
    const value = values[name]
    if (value === undefined || value === false) continue
    argv.push(spec.type === 'boolean' ? `--${name}` : `--${name}=${String(value)}`)
  }
  return argv
}

/**
 * check's reporters for the gate's verdict (text alone by default, GitHub's added under GitHub Actions).
 * record prints its own closing line on stdout, so a one-document rendering (JSON, JUnit XML) needs a file.
 */
function recordReporters(
  value: string | undefined,
  baseline: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Reporter[] {
  if (value !== undefined && baseline === undefined)
    throw new CachelabError(
      'usage',
      `--reporter renders the gate's verdict, so it needs --baseline: ${USAGE}`,
    )
  const reporters = reportersOption(value, false, env)
  const onStdout = reporters.find(
    (reporter) => reporter.file === undefined && (reporter.name === 'json' || reporter.name === 'junit'),
  )
  if (onStdout !== undefined)
    throw new CachelabError(
      'usage',
      `record prints its own lines on stdout: give ${onStdout.name} a file (--reporter ${onStdout.name}=FILE)`,
    )
  return reporters
}
