// The bench as a contract: each figure `npm run bench` measures, as a ratio to its floor or peer measured
// in the same run, beside its goal and whether it holds (and, where the goal is near what is possible at
// all, the best any implementation could reach); and the README's performance section, rendered from
// those figures between two markers and read back by its test.

import { readFileSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'

/** The goals, one per kind of figure (ratios: the same run measures both sides). */
export const BENCH_GOALS = {
  /** Long-session replay: 1,000 turns over 500 (linear is 2×). */
  turnsRatio: 2.2,
  /** Late over early per-request cost, over the bare SDK→MSW round trip's own at the same bodies. */
  lateToEarlyOverBare: 1.5,
  /** The whole matrix: wall over CPU on the default jobs (2 cores: 0.5 is perfect). */
  matrixWallToCpu: 0.6,
  /** The whole matrix in process: CPU per request over a bare SDK→MSW round trip's of the same bodies. */
  matrixCpuOverBare: 2,
  /** serve's requests per second over a bare node server's, at the same bodies. */
  serveRate: 0.5,
  /** serve with 3,000 live sessions: the last tenth's ms per request over the second tenth's. */
  siblingsTenths: 2,
  /** serve with 20,000 sessions expiring: peak RSS in MB. */
  expiryRssMb: 1024,
  /** An 11 MB request: the delay it adds to a small one over its own main-thread share. */
  largeRequestDelay: 1,
  /** `cachelab import`'s CPU over ccusage's (`ccusage daily --offline --json`) on the same Claude Code files. */
  importCpuOverCcusage: 1,
  /** `cachelab import` of one 1 GB Claude Code session of small requests: peak RSS in MB. */
  importPeakRssMb: 512,
} as const

/** What the bench does not measure, named in the README's section so its silence is not read as a pass. */
export const NOT_MEASURED: readonly string[] = []

/**
 * Figures a run may be unable to measure (ccusage cannot be installed or run; a gigabyte cannot be
 * written): the words the section names each with instead, followed by the reason. A figure is in the
 * table or named here, never neither.
 */
export const UNMEASURED_IN_RUN = {
  importCpu: "`cachelab import`'s CPU against ccusage's on the same Claude Code files (goal ≤ 1×): ",
  importMemory: "`cachelab import`'s peak RSS on a 1 GB Claude Code session (goal ≤ 512 MB): ",
} as const

export type Direction = 'at most' | 'at least'

/** One measured figure beside its goal. */
export interface ContractFigure {
  /** What was measured, over what (e.g. "long-session replay, anthropic: 1,000 turns ÷ 500 turns"). */
  name: string
  measured: number
  goal: number
  direction: Direction
  unit: '×' | '%' | 'MB'
  /**
   * The best any implementation could reach, measured in the same run: the same figure for one that does
   * only the least it must (a bare server that only counts the tokens it must report). It shows how far
   * the goal is from what is possible at all.
   */
  bound?: Bound
}

/** A figure's bound: its value, in the figure's unit, and what was measured to get it. */
export interface Bound {
  measured: number
  /** What does only the least, e.g. "a bare server that also counts every message's tokens". */
  what: string
}

/** Whether a figure meets its goal, as shown (rounded as the section prints it, so the two never disagree). */
export function holds(figure: Pick<ContractFigure, 'measured' | 'goal' | 'direction' | 'unit'>): boolean {
  const measured = asShown(figure.measured, figure.unit)
  return figure.direction === 'at most' ? measured <= figure.goal : measured >= figure.goal
}

/** A value rounded as the section shows it. */
function asShown(value: number, unit: ContractFigure['unit']): number {
  if (unit === '%') return Math.round(value * 100) / 100
  if (unit === 'MB') return Math.round(value)
  return Math.round(value * 100) / 100
}

const SYMBOL: Record<Direction, string> = { 'at most': '≤', 'at least': '≥' }

/** A figure's value as the section shows it (and reads it back). */
function shown(value: number, unit: ContractFigure['unit']): string {
  if (unit === '%') return `${(value * 100).toFixed(0)}%`
  if (unit === 'MB') return `${value.toFixed(0)} MB`
  return `${value.toFixed(2)}×`
}

/** The contract as the bench prints it to the terminal. */
export function contractLines(figures: readonly ContractFigure[]): string[] {
  const width = Math.max(0, ...figures.map((figure) => figure.name.length))
  return figures.map(
    (figure) =>
      `    ${figure.name.padEnd(width)}  ${shown(figure.measured, figure.unit).padStart(8)}  ` +
      `goal ${SYMBOL[figure.direction]} ${shown(figure.goal, figure.unit).padEnd(8)}  ${holds(figure) ? 'holds' : 'MISSED'}` +
      (figure.bound === undefined ? '' : `  (at best ${shown(figure.bound.measured, figure.unit)})`),
  )
}

/** The words that open a bound's line in the README's section (read back by `readBounds`). */
const BOUND_LINE = '- At best for '

/** A figure's bound as one line of the section: the figure's name, the bound as shown, what it measured. */
function boundLine(figure: ContractFigure & { bound: Bound }): string {
  return `${BOUND_LINE}"${figure.name}": ${shown(figure.bound.measured, figure.unit)}, ${figure.bound.what}.`
}

/** The bounds the section in `text` states: each figure's name and its bound as shown. */
export function readBounds(text: string): Array<{ name: string; measured: number; what: string }> {
  const start = text.indexOf(SECTION_START)
  const end = text.indexOf(SECTION_END)
  if (start < 0 || end < start) throw new Error('no performance section')
  return text
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith(BOUND_LINE))
    .map((line) => {
      const match = /^- At best for "(.+)": (-?[\d.]+)\s*(×|%|MB), (.+)\.$/.exec(line)
      if (match === null) throw new Error(`not a bound: ${line}`)
      const number = Number(match[2])
      return {
        name: match[1] ?? '',
        measured: match[3] === '%' ? number / 100 : number,
        what: match[4] ?? '',
      }
    })
}

/** The contract as the bench prints it last: how many goals hold, then a line per figure. */
export function contractReport(figures: readonly ContractFigure[]): string {
  const missed = figures.filter((figure) => !holds(figure)).length
  return [
    `the contract: ${figures.length - missed} of ${figures.length} goals hold`,
    ...contractLines(figures),
  ].join('\n')
}

/**
 * Rewrite the performance section of the README at `path` with these figures, measured here today;
 * `unmeasured` names what this run could not measure, and why.
 */
export function writePerformanceSection(
  path: URL,
  figures: readonly ContractFigure[],
  unmeasured: readonly string[] = [],
): void {
  const machine = {
    date: new Date().toISOString().slice(0, 10),
    node: process.versions.node,
    cores: availableParallelism(),
  }
  writeFileSync(
    path,
    replaceSection(
      readFileSync(path, 'utf8'),
      performanceSection(figures, machine, [...NOT_MEASURED, ...unmeasured]),
    ),
  )
}

export const SECTION_START =
  '<!-- bench:start (written by `npm run bench -- --readme`; do not edit by hand) -->'
export const SECTION_END = '<!-- bench:end -->'

/** Where and how the figures were measured, for the section's first line. */
export interface BenchMachine {
  /** The day of the run, YYYY-MM-DD. */
  date: string
  node: string
  cores: number
}

/** The README's performance section: every figure, its goal and its verdict, and what is not measured. */
export function performanceSection(
  figures: readonly ContractFigure[],
  machine: BenchMachine,
  notMeasured: readonly string[],
): string {
  const missed = figures.filter((figure) => !holds(figure)).length
  return [
    SECTION_START,
    `Measured by \`npm run bench\` on ${machine.date}, Node ${machine.node}, ${machine.cores} cores of a shared machine;`,
    'each figure is a ratio of two measurements of the same run, so it travels between machines better than a',
    `time would. ${figures.length - missed} of ${figures.length} goals hold.`,
    '',
    ...table(
      ['Figure', 'Measured', 'Goal', ''],
      ['left', 'right', 'right', 'left'],
      figures.map((figure) => [
        figure.name,
        shown(figure.measured, figure.unit),
        `${SYMBOL[figure.direction]} ${shown(figure.goal, figure.unit)}`,
        holds(figure) ? 'holds' : 'missed',
      ]),
    ),
    ...boundLines(figures),
    ...(notMeasured.length === 0
      ? []
      : ['', ...notMeasured.map((line) => `- Not measured by the bench: ${line}`)]),
    SECTION_END,
  ].join('\n')
}

/** The bounds of the figures that have one, after a line that says what a bound is. */
function boundLines(figures: readonly ContractFigure[]): string[] {
  const bounded = figures.filter(
    (figure): figure is ContractFigure & { bound: Bound } => figure.bound !== undefined,
  )
  if (bounded.length === 0) return []
  return [
    '',
    'Where a goal is near what is possible at all, the same run also measures the best any implementation',
    'could reach: the same figure for one that does only the least it must.',
    '',
    ...bounded.map(boundLine),
  ]
}

/** A Markdown table with its columns padded as the formatter (Biome) pads them, so `npm run check` passes. */
function table(
  header: readonly string[],
  align: readonly ('left' | 'right')[],
  rows: readonly string[][],
): string[] {
  const widths = header.map((cell, column) =>
    Math.max(3, cell.length, ...rows.map((row) => (row[column] ?? '').length)),
  )
  const line = (cells: readonly string[]) =>
    `| ${cells
      .map((cell, column) =>
        align[column] === 'right' ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
      )
      .join(' | ')} |`
  const rule = widths.map((width, column) =>
    align[column] === 'right' ? `${'-'.repeat(width - 1)}:` : '-'.repeat(width),
  )
  return [line(header), `| ${rule.join(' | ')} |`, ...rows.map(line)]
}

/** `text` with its performance section replaced by `section`; an error when the markers are missing. */
export function replaceSection(text: string, section: string): string {
  const start = text.indexOf(SECTION_START)
  const end = text.indexOf(SECTION_END)
  if (start < 0 || end < start)
    throw new Error(
      `no performance section to replace: the text lacks the markers ${SECTION_START} … ${SECTION_END}`,
    )
  return text.slice(0, start) + section + text.slice(end + SECTION_END.length)
}

/** One row of a section read back: its figure as shown, the goal and the verdict it states. */
export interface SectionRow {
  name: string
  measured: number
  goal: number
  direction: Direction
  unit: ContractFigure['unit']
  verdict: 'holds' | 'missed'
}

/** The rows of the performance section in `text` (an error when it has none). */
export function readSection(text: string): SectionRow[] {
  const start = text.indexOf(SECTION_START)
  const end = text.indexOf(SECTION_END)
  if (start < 0 || end < start) throw new Error('no performance section')
  const rows: SectionRow[] = []
  const value = (cell: string): { value: number; unit: ContractFigure['unit'] } => {
    const match = /^(-?[\d.]+)\s*(×|%|MB)$/.exec(cell.trim())
    if (match === null) throw new Error(`not a figure: ${cell}`)
    const unit = match[2] as ContractFigure['unit']
    const number = Number(match[1])
    return { value: unit === '%' ? number / 100 : number, unit }
  }
  for (const line of text.slice(start, end).split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim())
    if (cells.length !== 6 || cells[1] === 'Figure' || cells[1]?.startsWith('---')) continue
    const [, name, measuredCell, goalCell, verdict] = cells as [string, string, string, string, string]
    const direction: Direction = goalCell.startsWith('≤') ? 'at most' : 'at least'
    const measured = value(measuredCell)
    const goal = value(goalCell.slice(1))
    if (verdict !== 'holds' && verdict !== 'missed') throw new Error(`not a verdict: ${verdict}`)
    rows.push({ name, measured: measured.value, goal: goal.value, direction, unit: goal.unit, verdict })
  }
  if (rows.length === 0) throw new Error('the performance section has no figures')
  return rows
}

/** (b): the 1,000/500 ratio, and late/early over the bare round trip's own at the same bodies. */
export function longSessionFigures(
  provider: string,
  figures: { ratio1000to500: number; lateToEarlyRequestCost: number; bareLateToEarly: number },
): [ContractFigure, ContractFigure] {
  return [
    {
      name: `long-session replay, ${provider}: 1,000 turns ÷ 500 turns`,
      measured: figures.ratio1000to500,
      goal: BENCH_GOALS.turnsRatio,
      direction: 'at most',
      unit: '×',
    },
    {
      name: `long-session replay, ${provider}: late ÷ early request cost, ÷ the bare round trip's`,
      measured: figures.lateToEarlyRequestCost / figures.bareLateToEarly,
      goal: BENCH_GOALS.lateToEarlyOverBare,
      direction: 'at most',
      unit: '×',
    },
  ]
}

/** (b): the 10,000-turn replay's late/early request cost over the bare round trip's (it ran: it has one). */
export function longReplayFigure(
  provider: string,
  figures: { turns: number; lateToEarlyRequestCost: number; bareLateToEarly: number },
): ContractFigure {
  return {
    name: `long-session replay, ${provider}: ${figures.turns.toLocaleString('en-US')} turns, late ÷ early request cost, ÷ the bare round trip's`,
    measured: figures.lateToEarlyRequestCost / figures.bareLateToEarly,
    goal: BENCH_GOALS.lateToEarlyOverBare,
    direction: 'at most',
    unit: '×',
  }
}

/** (g): the whole matrix's wall over CPU on the default jobs, and its CPU per request over the bare round trip's. */
export function matrixFigures(wallToCpu: number, cpuOverBare: number): ContractFigure[] {
  return [
    {
      name: 'the whole matrix: wall ÷ CPU on the default jobs',
      measured: wallToCpu,
      goal: BENCH_GOALS.matrixWallToCpu,
      direction: 'at most',
      unit: '×',
    },
    {
      name: "the whole matrix in process: CPU per request ÷ a bare SDK→MSW round trip's of the same bodies",
      measured: cpuOverBare,
      goal: BENCH_GOALS.matrixCpuOverBare,
      direction: 'at most',
      unit: '×',
    },
  ]
}

/** (d)–(f): serve at scale (the large request on a fresh server, and on the filled one when measured). */
export function serveFigures(
  siblings: { sessions: number; ratio: number },
  expiry: { sessions: number; rssMb: readonly number[] },
  fresh: { ratio: number },
  filled: { ratio: number } | undefined,
): ContractFigure[] {
  const large = (label: string, ratio: number): ContractFigure => ({
    name: `serve, an 11 MB request (${label} server): a small one's delay ÷ its own share`,
    measured: ratio,
    goal: BENCH_GOALS.largeRequestDelay,
    direction: 'at most',
    unit: '×',
  })
  return [
    {
      name: `serve, ${siblings.sessions.toLocaleString('en-US')} live sessions: last tenth ÷ second tenth, ms per request`,
      measured: siblings.ratio,
      goal: BENCH_GOALS.siblingsTenths,
      direction: 'at most',
      unit: '×',
    },
    {
      name: `serve, ${expiry.sessions.toLocaleString('en-US')} sessions expiring: peak RSS`,
      measured: Math.max(...expiry.rssMb),
      goal: BENCH_GOALS.expiryRssMb,
      direction: 'at most',
      unit: 'MB',
    },
    large('fresh', fresh.ratio),
    ...(filled === undefined ? [] : [large('filled', filled.ratio)]),
  ]
}

/**
 * (i): `cachelab import`'s CPU over ccusage's on one corpus (`label`: small, 100 times), of `megabytes` MB;
 * `boundRatio`, a bare reader's CPU over ccusage's on the same files (the least any import must spend).
 */
export function importFigure(
  label: string,
  megabytes: number,
  ratio: number,
  boundRatio?: number,
): ContractFigure {
  return {
    name: `import of a synthetic Claude Code corpus, ${label} (${megabytes.toFixed(0)} MB): CPU ÷ ccusage's`,
    measured: ratio,
    goal: BENCH_GOALS.importCpuOverCcusage,
    direction: 'at most',
    unit: '×',
    ...(boundRatio === undefined
      ? {}
      : {
          bound: {
            measured: boundRatio,
            what: 'a bare Node reader of the same files (it reads, decodes and JSON.parses every line, nothing else)',
          },
        }),
  }
}

/** (j): `cachelab import`'s peak RSS on one session of about `gigabytes` GB of small requests. */
export function importMemoryFigure(gigabytes: number, peakRssMb: number): ContractFigure {
  return {
    name: `import of one ${gigabytes.toFixed(0)} GB Claude Code session of small requests: peak RSS`,
    measured: peakRssMb,
    goal: BENCH_GOALS.importPeakRssMb,
    direction: 'at most',
    unit: 'MB',
  }
}

/**
 * (h): serve's requests per second over a bare node server's, for one traffic shape; `countingRatio`, a bare
 * server's that also counts every message's tokens (what any server must do to report a fresh body's usage).
 */
export function serveRateFigure(label: string, ratio: number, countingRatio?: number): ContractFigure {
  return {
    name: `serve, ${label}: req/s ÷ a bare node server's`,
    measured: ratio,
    goal: BENCH_GOALS.serveRate,
    direction: 'at least',
    unit: '%',
    ...(countingRatio === undefined
      ? {}
      : {
          bound: {
            measured: countingRatio,
            what: "a bare node server that also counts every message's tokens with cachelab's tokenizer (nothing else)",
          },
        }),
  }
}
