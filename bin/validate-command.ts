// `cachelab validate FILE|DIR...`: cachelab's own session logs (run's `sessions/*.jsonl`) read with every
// line checked, each problem named as file:line; exit 1 when a log is invalid, 0 otherwise, 2 when there
// is nothing to read.

import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import { checkSessionLog, type LogCheck } from '../harness/store.ts'
import { countText } from '../reports/text-table.ts'
import { parse } from './args.ts'

/** Problems printed per log; the summary counts them all. */
const LISTED_PROBLEMS = 20

/** The session logs under the paths: files as given, directories walked (recursively) for `*.jsonl`. */
export function sessionLogFiles(paths: readonly string[]): string[] {
  const found: string[] = []
  const walk = (path: string, given: boolean) => {
    let directory: boolean
    try {
      directory = statSync(path).isDirectory()
    } catch {
      throw new CachelabError('input', `${path}: no such file or directory`)
    }
    if (!directory) {
      if (given || path.endsWith('.jsonl')) found.push(path)
      return
    }
    for (const name of readdirSync(path).sort()) walk(join(path, name), false)
  }
  for (const path of paths) walk(path, true)
  return found
}

/** One log's verdict as the terminal shows it: a head line, then its problems as file:line. */
export function validationLines(file: string, check: LogCheck): string[] {
  const torn =
    check.torn === undefined
      ? []
      : [
          `  ${file}:${check.torn.line}: last line cut mid-write (not an event; resuming the log moves it aside)`,
        ]
  if (check.problems.length === 0) return [`ok       ${file}: ${countText(check.events)} events`, ...torn]
  const listed = check.problems.slice(0, LISTED_PROBLEMS)
  return [
    `INVALID  ${file}: ${check.problems.length} ${check.problems.length === 1 ? 'problem' : 'problems'}`,
    ...listed.map((problem) => `  ${file}:${problem.line}: ${problem.reason}`),
    ...(check.problems.length > listed.length
      ? [`  … and ${check.problems.length - listed.length} more`]
      : []),
    ...torn,
  ]
}

export function validateCommand(argv: string[]): number {
  const { positionals } = parse(argv, {}, true)
  if (positionals.length === 0)
    throw new CachelabError('usage', 'validate needs session logs: cachelab validate FILE|DIR...')
  const files = sessionLogFiles(positionals)
  if (files.length === 0)
    throw new CachelabError('input', `no session logs (*.jsonl) under ${positionals.join(', ')}`)
  let invalid = 0
  let problems = 0
  let events = 0
  for (const file of files) {
    let content: string
    try {
      content = readFileSync(file, 'utf8')
    } catch (error) {
      throw new CachelabError('input', `cannot read ${file}: ${(error as Error).message}`)
    }
    const check = checkSessionLog(content)
    if (check.problems.length > 0) invalid += 1
    problems += check.problems.length
    events += check.events
    process.stdout.write(`${validationLines(file, check).join('\n')}\n`)
  }
  process.stdout.write(
    `validated ${files.length} session ${files.length === 1 ? 'log' : 'logs'}: ${files.length - invalid} valid, ${invalid} invalid${problems > 0 ? ` (${problems} ${problems === 1 ? 'problem' : 'problems'})` : ''}, ${countText(events)} events\n`,
  )
  return invalid > 0 ? 1 : 0
}
