// `check --reporter NAME[=FILE],…` and `--json`: which renderings of the gate's one verdict check writes,
// each to stdout or to a file, and the GitHub reporter added by itself under GitHub Actions
// (GITHUB_ACTIONS=true), its step summary appended to $GITHUB_STEP_SUMMARY.

import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import type { GateResult } from '../reports/gate.ts'
import { gateGithub } from '../reports/gate-github.ts'
import { gateJson } from '../reports/gate-json.ts'
import { gateJunit } from '../reports/gate-junit.ts'
import { gateReport } from '../reports/gate-text.ts'

/** The renderings check knows. */
export const REPORTER_NAMES = ['text', 'json', 'junit', 'github'] as const

export type ReporterName = (typeof REPORTER_NAMES)[number]

/** One rendering and where it goes. */
export interface Reporter {
  name: ReporterName
  /** The file it is written to; stdout when absent (stderr for GitHub's commands when stdout is taken). */
  file?: string
  /** Added because check runs under GitHub Actions, not named. */
  detected?: boolean
}

const SYNTAX = `--reporter takes ${REPORTER_NAMES.join(', ')}, each alone (stdout) or as NAME=FILE, comma-separated: --reporter text,junit=reports/out/junit.xml`

/** Renderings that are one document: on stdout, nothing else may be written there. */
const DOCUMENTS: readonly ReporterName[] = ['json', 'junit']

/**
 * The reporters of `--reporter` and `--json` (text alone when neither is given), and GitHub's when the
 * environment says GitHub Actions runs check. A usage error names what is wrong and the syntax.
 */
export function reportersOption(
  value: string | undefined,
  json: boolean,
  env: Readonly<Record<string, string | undefined>>,
): Reporter[] {
  const reporters: Reporter[] = []
  const entries = value === undefined ? [] : value.split(',').map((entry) => entry.trim())
  if (value !== undefined && entries.every((entry) => entry === ''))
    throw new CachelabError('usage', `--reporter needs at least one name: ${SYNTAX}`)
  for (const entry of entries.filter((each) => each !== '')) {
    const at = entry.indexOf('=')
    const name = at === -1 ? entry : entry.slice(0, at)
    const file = at === -1 ? undefined : entry.slice(at + 1)
    if (!REPORTER_NAMES.includes(name as ReporterName))
      throw new CachelabError('usage', `unknown reporter ${JSON.stringify(name)}: ${SYNTAX}`)
    if (file !== undefined && file.trim() === '')
      throw new CachelabError('usage', `--reporter ${name}= needs a file after the =: ${SYNTAX}`)
    if (reporters.some((reporter) => reporter.name === name))
      throw new CachelabError('usage', `--reporter names ${name} twice: name each reporter once`)
    reporters.push({ name: name as ReporterName, ...(file !== undefined ? { file } : {}) })
  }
  if (json) {
    if (reporters.some((reporter) => reporter.name === 'json'))
      throw new CachelabError('usage', '--json is --reporter json: give one of them')
    reporters.push({ name: 'json' })
  }
  if (reporters.length === 0) reporters.push({ name: 'text' })
  const onStdout = reporters.filter((reporter) => reporter.file === undefined)
  const document = onStdout.find((reporter) => DOCUMENTS.includes(reporter.name))
  if (document !== undefined && onStdout.length > 1)
    throw new CachelabError(
      'usage',
      `--reporter ${document.name} writes one document to stdout, and ${onStdout
        .filter((reporter) => reporter !== document)
        .map((reporter) => reporter.name)
        .join(' and ')} would write there too: give all but one a file (${document.name}=FILE)`,
    )
  if (env.GITHUB_ACTIONS === 'true' && !reporters.some((reporter) => reporter.name === 'github'))
    reporters.push({ name: 'github', detected: true })
  return reporters
}

/** Where reporters write: the process's streams and files in tests and in the command alike. */
export interface ReportSinks {
  stdout: (text: string) => void
  stderr: (text: string) => void
  /** Write (or, for the step summary, append to) a file, making its folder. */
  writeFile: (path: string, text: string) => void
  appendFile: (path: string, text: string) => void
}

/** The process's own sinks. */
export const PROCESS_SINKS: ReportSinks = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  writeFile: (path, text) => {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, text)
  },
  appendFile: (path, text) => {
    mkdirSync(dirname(path), { recursive: true })
    appendFileSync(path, text)
  },
}

/** What the reporters render besides the verdict. */
export interface ReportContext {
  /** check's lines beside the verdict (no breaks.csv in the baseline, a gateway's changes). */
  notices: readonly string[]
  /** The command that refreshes the baseline. */
  refresh: string
  /** `$GITHUB_STEP_SUMMARY`, where GitHub's reporter appends its Markdown. */
  stepSummary: string | undefined
}

/** Render the verdict once per reporter and write each where it goes. */
export function writeReports(
  result: GateResult,
  reporters: readonly Reporter[],
  context: ReportContext,
  sinks: ReportSinks = PROCESS_SINKS,
): void {
  const stdoutTaken = reporters.some(
    (reporter) => reporter.file === undefined && DOCUMENTS.includes(reporter.name),
  )
  const put = (reporter: Reporter, text: string) => {
    if (reporter.file !== undefined) sinks.writeFile(reporter.file, text)
    else if (reporter.name === 'github' && stdoutTaken) sinks.stderr(text)
    else sinks.stdout(text)
  }
  for (const reporter of reporters) {
    switch (reporter.name) {
      case 'text':
        put(
          reporter,
          `${[...context.notices, gateReport(result, { refresh: context.refresh })].join('\n')}\n`,
        )
        break
      case 'json':
        put(reporter, gateJson(result, { notices: context.notices }))
        break
      case 'junit':
        put(reporter, gateJunit(result))
        break
      case 'github': {
        const output = gateGithub(result, context.notices)
        put(reporter, output.commands)
        if (context.stepSummary !== undefined && context.stepSummary !== '')
          sinks.appendFile(context.stepSummary, output.summary)
        break
      }
      default: {
        const unknown: never = reporter.name
        throw new Error(`unknown reporter ${String(unknown)}`)
      }
    }
  }
}
