import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  BENCH_GOALS,
  type ContractFigure,
  contractLines,
  holds,
  importFigure,
  importMemoryFigure,
  longReplayFigure,
  longSessionFigures,
  matrixFigures,
  NOT_MEASURED,
  performanceSection,
  readBounds,
  readSection,
  replaceSection,
  SECTION_END,
  SECTION_START,
  serveFigures,
  serveRateFigure,
  UNMEASURED_IN_RUN,
} from './bench-contract.ts'

const machine = { date: '2026-12-03', node: '20.20.2', cores: 2 }
const figures: ContractFigure[] = [
  {
    name: 'replay, anthropic: 1,000 turns ÷ 500 turns',
    measured: 2.13,
    goal: 2.2,
    direction: 'at most',
    unit: '×',
  },
  {
    name: 'replay, deepseek: 1,000 turns ÷ 500 turns',
    measured: 2.42,
    goal: 2.2,
    direction: 'at most',
    unit: '×',
  },
  { name: 'serve, fresh: req/s ÷ bare', measured: 0.0171, goal: 0.5, direction: 'at least', unit: '%' },
  { name: 'serve, expiring: peak RSS', measured: 612.4, goal: 1024, direction: 'at most', unit: 'MB' },
]

describe('the bench contract', () => {
  it('judges each figure by its direction', () => {
    expect(figures.map(holds)).toEqual([true, false, false, true])
    expect(holds({ ...figures[2], measured: 0.5 } as ContractFigure)).toBe(true)
  })

  it('prints one line per figure with its goal and verdict', () => {
    const lines = contractLines(figures)
    expect(lines).toHaveLength(4)
    expect(lines[1]).toMatch(/2\.42×\s+goal ≤ 2\.20×\s+MISSED$/)
    expect(lines[2]).toMatch(/2%\s+goal ≥ 50%\s+MISSED$/)
  })

  it('renders a section that reads back to the same figures, goals and verdicts', () => {
    const section = performanceSection(figures, machine, ['the import against ccusage.'])
    expect(section.startsWith(SECTION_START) && section.endsWith(SECTION_END)).toBe(true)
    expect(section).toContain('2 of 4 goals hold')
    expect(section).toContain('- Not measured by the bench: the import against ccusage.')
    expect(readSection(section)).toEqual([
      {
        name: figures[0]?.name,
        measured: 2.13,
        goal: 2.2,
        direction: 'at most',
        unit: '×',
        verdict: 'holds',
      },
      {
        name: figures[1]?.name,
        measured: 2.42,
        goal: 2.2,
        direction: 'at most',
        unit: '×',
        verdict: 'missed',
      },
      {
        name: figures[2]?.name,
        measured: 0.02,
        goal: 0.5,
        direction: 'at least',
        unit: '%',
        verdict: 'missed',
      },
      {
        name: figures[3]?.name,
        measured: 612,
        goal: 1024,
        direction: 'at most',
        unit: 'MB',
        verdict: 'holds',
      },
    ])
  })

  it('builds its figures from what the parts measured', () => {
    const [turns, late] = longSessionFigures('gemini', {
      ratio1000to500: 2.05,
      lateToEarlyRequestCost: 3,
      bareLateToEarly: 1.5,
    })
    expect(turns).toMatchObject({ measured: 2.05, goal: BENCH_GOALS.turnsRatio })
    expect(late).toMatchObject({ measured: 2, goal: 1.5, direction: 'at most' })
    expect(holds(late)).toBe(false)
    const long = longReplayFigure('gemini', {
      turns: 10_000,
      lateToEarlyRequestCost: 13,
      bareLateToEarly: 26,
    })
    expect(long).toMatchObject({ measured: 0.5, goal: BENCH_GOALS.lateToEarlyOverBare })
    expect(long.name).toBe(
      "long-session replay, gemini: 10,000 turns, late ÷ early request cost, ÷ the bare round trip's",
    )
    const [wall, cpu] = matrixFigures(0.55, 2.5)
    expect([holds(wall as ContractFigure), holds(cpu as ContractFigure)]).toEqual([true, false])
    const serve = serveFigures(
      { sessions: 3000, ratio: 1.05 },
      { sessions: 20000, rssMb: [300, 742, 500] },
      { ratio: 0.31 },
      undefined,
    )
    expect(serve.map((figure) => figure.measured)).toEqual([1.05, 742, 0.31])
    expect(serve[0]?.name).toContain('3,000 live sessions')
    const small = importFigure('small', 3.9, 1.25)
    expect(small).toMatchObject({ measured: 1.25, goal: 1, direction: 'at most', unit: '×' })
    expect(small.name).toBe("import of a synthetic Claude Code corpus, small (4 MB): CPU ÷ ccusage's")
    expect(holds(small)).toBe(false)
    expect(holds(importMemoryFigure(1, 389))).toBe(true)
    expect(holds(importMemoryFigure(1, 600))).toBe(false)
  })

  it("states a figure's bound (the best possible, measured in the same run) after the table, read back", () => {
    const fresh = serveRateFigure('fresh 22k-token sessions', 0.23, 0.48)
    const growing = serveRateFigure('growing sessions', 0.57)
    const small = importFigure('small', 3.9, 1.82, 0.63)
    expect(growing.bound).toBeUndefined()
    expect(contractLines([fresh, growing, small])).toEqual([
      expect.stringMatching(/23%\s+goal ≥ 50%\s+MISSED {2}\(at best 48%\)$/),
      expect.stringMatching(/57%\s+goal ≥ 50%\s+holds$/),
      expect.stringMatching(/1\.82×\s+goal ≤ 1\.00×\s+MISSED {2}\(at best 0\.63×\)$/),
    ])
    const section = performanceSection([fresh, growing, small], machine, [])
    expect(readSection(section)).toHaveLength(3)
    expect(readBounds(section)).toEqual([
      { name: fresh.name, measured: 0.48, what: fresh.bound?.what },
      { name: small.name, measured: 0.63, what: small.bound?.what },
    ])
    expect(section).toContain(
      `- At best for "serve, fresh 22k-token sessions: req/s ÷ a bare node server's": 48%, a bare node server`,
    )
    // A section without bounds says nothing about them.
    expect(performanceSection([growing], machine, [])).not.toContain('At best')
    expect(() => readBounds(`${SECTION_START}\n- At best for "x": soon.\n${SECTION_END}`)).toThrow(
      /not a bound/,
    )
  })

  it('replaces only what lies between the markers, and says so when they are missing', () => {
    const text = `before\n${SECTION_START}\nold\n${SECTION_END}\nafter\n`
    expect(replaceSection(text, 'NEW')).toBe('before\nNEW\nafter\n')
    expect(() => replaceSection('no markers', 'NEW')).toThrow(/lacks the markers/)
  })
})

describe("the README's performance section", () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  const rows = readSection(readme)
  const goals = new Set<number>(Object.values(BENCH_GOALS))

  it('states each verdict as its figure and goal give it (the figures as shown)', () => {
    for (const row of rows)
      expect({ name: row.name, verdict: row.verdict }).toEqual({
        name: row.name,
        verdict: holds(row) ? 'holds' : 'missed',
      })
  })

  it("uses the bench's own goals and counts them right", () => {
    for (const row of rows) expect(goals.has(row.goal), row.name).toBe(true)
    const held = rows.filter((row) => row.verdict === 'holds').length
    expect(readme).toContain(`${held} of ${rows.length} goals hold`)
  })

  it('covers every provider of the long-session replay and both serve shapes', () => {
    for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'deepseek', 'bedrock', 'gemini'])
      expect(rows.filter((row) => row.name.startsWith(`long-session replay, ${provider}:`))).toHaveLength(3)
    expect(rows.filter((row) => row.name.includes("req/s ÷ a bare node server's"))).toHaveLength(2)
  })

  it('has both matrix figures and lists as unmeasured exactly what the bench leaves out', () => {
    const names = rows.map((row) => row.name)
    for (const figure of matrixFigures(0.5, 1)) expect(names).toContain(figure.name)
    const unmeasured = readme
      .split('\n')
      .filter((line) => line.startsWith('- Not measured by the bench: '))
      .map((line) => line.slice('- Not measured by the bench: '.length))
    const skipped = unmeasured.filter((line) => !NOT_MEASURED.includes(line))
    expect(unmeasured.filter((line) => NOT_MEASURED.includes(line))).toEqual([...NOT_MEASURED])
    for (const line of skipped)
      expect(
        Object.values(UNMEASURED_IN_RUN).some((words) => line.startsWith(words)),
        line,
      ).toBe(true)
  })

  it('gives a bound only to a figure of its table', () => {
    const names = rows.map((row) => row.name)
    for (const bound of readBounds(readme)) expect(names).toContain(bound.name)
  })

  it('has the import figures, or names them as not measured in the run it shows', () => {
    const named = (words: string) =>
      readme.split('\n').some((line) => line.startsWith(`- Not measured by the bench: ${words}`))
    const cpu = rows.filter((row) => row.name.endsWith("CPU ÷ ccusage's"))
    const memory = rows.filter((row) => row.name.endsWith('session of small requests: peak RSS'))
    expect(named(UNMEASURED_IN_RUN.importCpu) ? 0 : 2).toBe(cpu.length)
    expect(named(UNMEASURED_IN_RUN.importMemory) ? 0 : 1).toBe(memory.length)
    for (const row of [...cpu, ...memory])
      expect(row.goal).toBe(
        row.unit === 'MB' ? BENCH_GOALS.importPeakRssMb : BENCH_GOALS.importCpuOverCcusage,
      )
  })
})
