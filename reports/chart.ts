// The per-session chart of report.html as inline SVG: one stacked bar per request (cache-read, cache-write,
// uncached tokens), the hit ratio as a line on a 0–100% right axis, breaks marked with their cause, idle
// gaps marked on the request axis. A long session keeps a fixed width: the requests near its breaks are
// drawn one by one and the quiet stretches between them as lighter bars of their mean (window.ts).

import { changeLines } from './break-change.ts'
import type { BreakEvent } from './break-events.ts'
import { modelSwitchText, modelText, stepLabel } from './labels.ts'
import { coordinate, escapeHtml } from './markup.ts'
import { IDLE_SECONDS, type SessionRows, type StepLabel, WINDOW_CONTEXT } from './session-rows.ts'
import { countText, dollarText } from './text-table.ts'
import type { StepRow } from './types.ts'
import { type Slot, slotEnd, slotStart, windowRows } from './window.ts'

/** Okabe–Ito colours, distinguishable with the common colour-vision deficiencies. */
export const CHART_COLOURS = {
  read: '#0072B2',
  write: '#E69F00',
  uncached: '#CC79A7',
  hitRatio: '#1f1f1f',
  break: '#D55E00',
  failed: '#8a8a8a',
  idle: '#5f6368',
} as const

const PLOT_HEIGHT = 236
const MARGIN = { right: 60, bottom: 48, left: 68 }
/** Room above the plot for break markers and their labels; less when the session has no break. */
const TOP_WITH_BREAKS = 64
const TOP_WITHOUT_BREAKS = 20
const PLOT_WIDTH = 1000
/** Most columns a chart draws: at least 5 units per column, so a chart never outgrows the page. */
export const MAX_COLUMNS = 200
/** Quiet stretches are drawn this much lighter than single requests. */
const SPAN_OPACITY = 0.45
const LABEL_SPACING = 36
const LABEL_FONT = 10.5
const LABEL_CHARACTER_WIDTH = 6.2
const BREAK_LANES = 3

/** What the chart draws for one slot: its requests' per-request mean, or a single request. */
interface Column {
  slot: Slot
  /** A single request's row, whole. */
  row: StepRow | undefined
  /** Requests in the column, their models, and the tokens all of them lost. */
  count: number
  models: readonly string[]
  lostAll: number
  /** The first and last requests (the first's turn.step labels the column). */
  first: StepLabel
  last: StepLabel
  /** False for a single failed attempt (drawn hatched). */
  ok: boolean
  /** Mean tokens per successful request of the column (exact for a single request). */
  read: number
  write: number
  uncached: number
  ideal: number
  lost: number
  /** Token-weighted over the column's successful requests. */
  hitRatio: number | undefined
  /** The column's rows with a client-side break. */
  breaks: readonly StepRow[]
  /** Virtual seconds between this column's first request and the previous column's last, when idle. */
  idleBefore: number
}

/** Where things go in one chart. */
interface Geometry {
  /** The chart's own prefix for element ids. */
  id: string
  width: number
  height: number
  plotTop: number
  plotWidth: number
  plotHeight: number
  /** The x axis, in user units from the top. */
  bottom: number
  /** Horizontal room per column. */
  band: number
  barWidth: number
  /** Token-axis top and ticks. */
  scale: { top: number; ticks: number[] }
}

/** What a chart can say beyond the rows. */
export interface ChartOptions {
  /** The session event a break names, when the session log was read. */
  eventOf?: (seq: number) => BreakEvent | undefined
  /** Where the page shows what changed at a break, when it does: its marker links there. */
  changeHref?: (row: StepRow) => string | undefined
}

/** What the tooltips read: the options, and the requests that switched model (to the previous model). */
interface Context extends ChartOptions {
  switched: ReadonlyMap<StepRow, string>
}

/** The chart of one session's rows; `id` makes its element ids unique in the page. */
export function sessionChart(
  rows: SessionRows,
  id: string,
  title: string,
  chartOptions: ChartOptions = {},
): string {
  const options: Context = { ...chartOptions, switched: rows.switched }
  const columns = columnsOf(rows)
  const breaks = rows.clientBreaks
  const spans = columns.filter((column) => column.slot.kind === 'span')
  const plotTop = breaks > 0 ? TOP_WITH_BREAKS : TOP_WITHOUT_BREAKS
  const band = PLOT_WIDTH / Math.max(columns.length, 1)
  const geometry: Geometry = {
    id,
    width: MARGIN.left + PLOT_WIDTH + MARGIN.right,
    height: plotTop + PLOT_HEIGHT + MARGIN.bottom,
    plotTop,
    plotWidth: PLOT_WIDTH,
    plotHeight: PLOT_HEIGHT,
    bottom: plotTop + PLOT_HEIGHT,
    band,
    barWidth: Math.max(1, Math.min(band * 0.72, 48)),
    scale: tokenScale(
      Math.max(
        0,
        ...columns.map((column) => Math.max(column.read + column.write + column.uncached, column.ideal)),
      ),
    ),
  }
  const { width, height } = geometry
  const drawn =
    spans.length === 0
      ? ''
      : ` Quiet stretches are drawn as the mean of their requests: ${columns.length} columns for ${rows.count} requests.`
  return [
    `<svg class="chart" id="${id}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-labelledby="${id}-title ${id}-desc">`,
    `<title id="${id}-title">${escapeHtml(title)}</title>`,
    `<desc id="${id}-desc">${rows.count} requests, ${breaks} cache ${breaks === 1 ? 'break' : 'breaks'}. Bars: cache-read, cache-write and uncached input tokens per request; line: hit ratio.${drawn}</desc>`,
    rows.failed > 0
      ? `<defs><pattern id="${id}-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f2f2f2"/><line x1="0" y1="0" x2="0" y2="6" stroke="${CHART_COLOURS.failed}" stroke-width="2"/></pattern></defs>`
      : '',
    axes(columns, geometry),
    breakColumns(columns, geometry),
    bars(columns, geometry, options),
    hitRatioLine(columns, geometry),
    idleGaps(columns, geometry),
    breakMarkers(columns, geometry, options),
    `<line x1="${MARGIN.left}" x2="${MARGIN.left + PLOT_WIDTH}" y1="${geometry.bottom}" y2="${geometry.bottom}" stroke="#5f6368"/>`,
    '</svg>',
  ].join('\n')
}

/** The session's columns: every request when they fit, else windowed around the breaks. */
function columnsOf(rows: SessionRows): Column[] {
  const slots = windowRows(rows, { limit: MAX_COLUMNS, context: WINDOW_CONTEXT, stretches: 'bins' })
  let previousEnd: number | undefined
  return slots.map((slot) => {
    const start = slotStart(slot)
    const end = slotEnd(slot)
    const span = rows.span(start, end)
    const mean = (sum: number) => (span.ok === 0 ? 0 : sum / span.ok)
    const gap = previousEnd === undefined ? 0 : rows.time(start) - rows.time(previousEnd - 1)
    previousEnd = end
    return {
      slot,
      row: slot.kind === 'request' ? rows.row(slot.index) : undefined,
      count: span.count,
      models: span.models,
      lostAll: span.lostAll,
      first: span.first,
      last: span.last,
      ok: span.ok > 0,
      read: mean(span.read),
      write: mean(span.write),
      uncached: mean(span.uncached),
      ideal: mean(span.ideal),
      lost: mean(span.lost),
      hitRatio: span.input === 0 ? undefined : span.read / span.input,
      breaks: span.clientBreaks,
      idleBefore: gap >= IDLE_SECONDS ? gap : 0,
    }
  })
}

const centreOf = (geometry: Geometry, index: number) => MARGIN.left + geometry.band * (index + 0.5)
const tokensY = (geometry: Geometry, tokens: number) =>
  geometry.bottom - (tokens / geometry.scale.top) * geometry.plotHeight
const ratioY = (geometry: Geometry, ratio: number) => geometry.bottom - ratio * geometry.plotHeight

/** Grid lines, both axes' ticks and titles, and the x labels (thinned so they do not collide). */
function axes(columns: readonly Column[], geometry: Geometry): string {
  const { plotTop, plotWidth, plotHeight, bottom, width, height } = geometry
  const parts: string[] = ['<g class="axes" font-size="11" fill="#5f6368">']
  for (const tick of geometry.scale.ticks) {
    const at = coordinate(tokensY(geometry, tick))
    parts.push(
      `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotWidth}" y1="${at}" y2="${at}" stroke="#e3e3e8"/>`,
      `<text x="${MARGIN.left - 8}" y="${at}" text-anchor="end" dominant-baseline="middle">${compactCount(tick)}</text>`,
    )
  }
  for (const percent of [0, 25, 50, 75, 100]) {
    parts.push(
      `<text x="${MARGIN.left + plotWidth + 8}" y="${coordinate(ratioY(geometry, percent / 100))}" dominant-baseline="middle">${percent}%</text>`,
    )
  }
  const middle = coordinate(plotTop + plotHeight / 2)
  parts.push(
    `<text transform="translate(16 ${middle}) rotate(-90)" text-anchor="middle">input tokens</text>`,
    `<text transform="translate(${coordinate(width - 12)} ${middle}) rotate(90)" text-anchor="middle">hit ratio</text>`,
    `<text x="${coordinate(MARGIN.left + plotWidth / 2)}" y="${height - 6}" text-anchor="middle">request (turn.step)</text>`,
  )
  const every = Math.max(1, Math.ceil(LABEL_SPACING / geometry.band))
  for (const [index, column] of columns.entries()) {
    if (index % every !== 0) continue
    parts.push(
      `<text x="${coordinate(centreOf(geometry, index))}" y="${bottom + 16}" text-anchor="middle">${escapeHtml(stepLabel(column.first))}</text>`,
    )
  }
  parts.push('</g>')
  return parts.join('')
}

/** A tinted column behind each break, so a break reads as a highlighted request. */
function breakColumns(columns: readonly Column[], geometry: Geometry): string {
  const parts: string[] = ['<g class="break-columns">']
  for (const [index, column] of columns.entries()) {
    if (column.breaks.length === 0) continue
    parts.push(
      `<rect x="${coordinate(centreOf(geometry, index) - geometry.band / 2)}" y="${geometry.plotTop}" width="${coordinate(geometry.band)}" height="${geometry.plotHeight}" fill="${CHART_COLOURS.break}" fill-opacity="0.09"/>`,
    )
  }
  parts.push('</g>')
  return parts.join('')
}

/**
 * The stacked buckets as one path per colour (a chart's bytes grow by a few characters per bar, not an
 * element per bucket), quiet stretches lighter; the ideal-read marks; then one full-height target per
 * column carrying its tooltip, a failed attempt's hatched.
 */
function bars(columns: readonly Column[], geometry: Geometry, options: Context): string {
  const buckets = [
    ['read', CHART_COLOURS.read],
    ['write', CHART_COLOURS.write],
    ['uncached', CHART_COLOURS.uncached],
  ] as const
  const paths = { single: { read: '', write: '', uncached: '' }, span: { read: '', write: '', uncached: '' } }
  const ideals: string[] = []
  const targets: string[] = []
  const widthText = coordinate(geometry.barWidth)
  for (const [index, column] of columns.entries()) {
    const centre = centreOf(geometry, index)
    const left = coordinate(centre - geometry.barWidth / 2)
    const classes = [
      'bar',
      column.ok ? '' : 'failed',
      column.slot.kind === 'span' ? 'span' : '',
      column.breaks.length > 0 ? 'break' : '',
    ].filter((name) => name !== '')
    const fill = column.ok
      ? 'fill="transparent"'
      : `fill="url(#${geometry.id}-hatch)" stroke="${CHART_COLOURS.failed}" stroke-dasharray="3 2"`
    targets.push(
      `<g class="${classes.join(' ')}" data-index="${slotStart(column.slot)}"><title>${escapeHtml(columnTitle(column, options))}</title><rect x="${left}" y="${geometry.plotTop}" width="${widthText}" height="${geometry.plotHeight}" ${fill}/></g>`,
    )
    if (!column.ok) continue
    const kind = column.slot.kind === 'span' ? 'span' : 'single'
    let base = 0
    for (const [bucket] of buckets) {
      const tokens = column[bucket]
      if (tokens > 0) {
        const top = tokensY(geometry, base + tokens)
        paths[kind][bucket] +=
          `M${left} ${coordinate(top)}h${widthText}v${coordinate(tokensY(geometry, base) - top)}h-${widthText}z`
      }
      base += tokens
    }
    if (column.lost > 0) {
      const at = coordinate(tokensY(geometry, column.ideal))
      ideals.push(`M${left} ${at}H${coordinate(centre + geometry.barWidth / 2)}`)
    }
  }
  const parts: string[] = ['<g class="bars">']
  for (const kind of ['single', 'span'] as const) {
    for (const [bucket, colour] of buckets) {
      const path = paths[kind][bucket]
      if (path !== '')
        parts.push(
          `<path class="${bucket}" d="${path}" fill="${colour}"${kind === 'span' ? ` fill-opacity="${SPAN_OPACITY}"` : ''}/>`,
        )
    }
  }
  if (ideals.length > 0)
    parts.push(
      `<path class="ideal" d="${ideals.join('')}" stroke="#1f1f1f" stroke-width="1.5" stroke-dasharray="3 2" fill="none"/>`,
    )
  parts.push('</g>', '<g class="targets">', ...targets, '</g>')
  return parts.join('')
}

/** The hit ratio over the bars, with a light halo so it stays legible on any bar colour; dots when there is room. */
function hitRatioLine(columns: readonly Column[], geometry: Geometry): string {
  const points = columns.flatMap((column, index) =>
    column.ok && column.hitRatio !== undefined
      ? [{ x: centreOf(geometry, index), y: ratioY(geometry, column.hitRatio), column }]
      : [],
  )
  if (points.length === 0) return ''
  const path = points
    .map((point, index) => `${index === 0 ? 'M' : 'L'}${coordinate(point.x)} ${coordinate(point.y)}`)
    .join(' ')
  const parts = [
    `<g class="hit-ratio" fill="none" pointer-events="none"><path d="${path}" stroke="#ffffff" stroke-width="4" stroke-linejoin="round" stroke-opacity="0.85"/>`,
    `<path d="${path}" stroke="${CHART_COLOURS.hitRatio}" stroke-width="1.75" stroke-linejoin="round"/>`,
  ]
  if (geometry.band >= 10) {
    // Dots without tooltips of their own: the column's target under them says the same and more.
    parts.push(`<g fill="${CHART_COLOURS.hitRatio}" stroke="#ffffff">`)
    for (const point of points)
      parts.push(`<circle cx="${coordinate(point.x)}" cy="${coordinate(point.y)}" r="2.6"/>`)
    parts.push('</g>')
  }
  parts.push('</g>')
  return parts.join('')
}

/** A dashed line where the session sat idle between two requests, with how long, on the request axis. */
function idleGaps(columns: readonly Column[], geometry: Geometry): string {
  const parts: string[] = ['<g class="idle-gaps">']
  for (const [index, column] of columns.entries()) {
    if (column.idleBefore === 0) continue
    const x = coordinate(MARGIN.left + geometry.band * index)
    const label = `idle ${durationText(column.idleBefore)}`
    parts.push(
      `<g class="idle-gap"><title>${escapeHtml(`${label} before ${stepLabel(column.first)}`)}</title>`,
      `<line x1="${x}" x2="${x}" y1="${geometry.plotTop}" y2="${geometry.bottom + 6}" stroke="${CHART_COLOURS.idle}" stroke-width="1.5" stroke-dasharray="5 3"/>`,
      `<text x="${x}" y="${coordinate(geometry.bottom + 30)}" text-anchor="middle" font-size="10.5" fill="${CHART_COLOURS.idle}" font-weight="600">${escapeHtml(label)}</text></g>`,
    )
  }
  parts.push('</g>')
  return parts.join('')
}

/** A marker at the top of each break column, its cause as a tooltip and, where there is room, a label. */
function breakMarkers(columns: readonly Column[], geometry: Geometry, options: Context): string {
  const { width, plotTop } = geometry
  const laneEnds: number[] = new Array<number>(BREAK_LANES).fill(Number.NEGATIVE_INFINITY)
  const markers: string[] = ['<g class="breaks">']
  for (const [index, column] of columns.entries()) {
    const [first] = column.breaks
    if (first === undefined) continue
    const x = centreOf(geometry, index)
    const top = plotTop - 4
    const tooltip = escapeHtml(column.breaks.map((row) => breakTitle(row, options)).join('\n'))
    // The marker opens what changed at the column's first break that the page draws.
    const href = column.breaks.map((row) => options.changeHref?.(row)).find((target) => target !== undefined)
    markers.push(
      `${href === undefined ? '' : `<a href="${href}">`}<g class="break-marker" data-index="${slotStart(column.slot)}"><title>${tooltip}</title>`,
      `<path d="M${coordinate(x - 5)} ${coordinate(top - 8)} L${coordinate(x + 5)} ${coordinate(top - 8)} L${coordinate(x)} ${coordinate(top)} Z" fill="${CHART_COLOURS.break}"/>`,
    )
    const causes = new Set(column.breaks.map((row) => row.breakCause))
    const label = causes.size === 1 ? `${first.breakCause}` : `${column.breaks.length} breaks`
    const labelWidth = label.length * LABEL_CHARACTER_WIDTH
    const anchor = Math.min(Math.max(x, labelWidth / 2 + 2), width - labelWidth / 2 - 2)
    const start = anchor - labelWidth / 2
    const lane = laneEnds.findIndex((end) => end + 6 <= start)
    if (lane >= 0) {
      laneEnds[lane] = anchor + labelWidth / 2
      markers.push(
        `<text class="break-label" x="${coordinate(anchor)}" y="${coordinate(top - 12 - lane * 13)}" text-anchor="middle" font-size="${LABEL_FONT}" fill="#8a3200">${escapeHtml(label)}</text>`,
      )
    }
    markers.push(href === undefined ? '</g>' : '</g></a>')
  }
  markers.push('</g>')
  return markers.join('')
}

function columnTitle(column: Column, options: Context): string {
  const row = column.row
  if (row === undefined) {
    const models = column.models
    const lines = [
      `${stepLabel(column.first)} to ${stepLabel(column.last)}: ${column.count} requests, the mean of each drawn`,
      `${models.length === 1 ? 'model' : 'models'} ${models.join(', ')}`,
      `mean input ${countText(column.read + column.write + column.uncached)} = read ${countText(column.read)} + write ${countText(column.write)} + uncached ${countText(column.uncached)}`,
      `hit ratio ${percentOf(column.hitRatio)} (token-weighted)`,
    ]
    if (column.lostAll > 0) lines.push(`${countText(column.lostAll)} tokens lost in all`)
    lines.push(...column.breaks.map((entry) => breakTitle(entry, options)))
    return lines.join('\n')
  }
  const where = `turn ${row.turn} step ${row.step}${row.attempt === 0 ? '' : ` attempt ${row.attempt}`}`
  if (!row.ok) return `${where}: failed attempt on ${modelText(row)}`
  if (row.usageNotReported === true) return `${where}: answered on ${modelText(row)}, usage not reported`
  const previous = options.switched.get(row)
  const lines = [
    `${where}${row.cold ? ' (cold: first request)' : ''}`,
    `model ${modelText(row)}${previous === undefined ? '' : `, switched from ${previous}`}`,
    `input ${countText(row.inputTokens)} = read ${countText(row.cacheReadTokens)} + write ${countText(row.cacheWriteTokens)} + uncached ${countText(row.uncachedTokens)}`,
    `hit ratio ${percentOf(row.hitRatio)}`,
  ]
  if (row.lostTokens > 0)
    lines.push(`ideal read ${countText(row.idealCacheReadTokens)}, lost ${countText(row.lostTokens)}`)
  if (row.breakCause !== undefined) lines.push(breakTitle(row, options))
  return lines.join('\n')
}

/** A break in a tooltip: where (with the two models of a switch), why, the event behind it and what it cost. */
function breakTitle(row: StepRow, options: Context): string {
  const previous = options.switched.get(row)
  const models = previous === undefined ? '' : ` ${modelSwitchText(previous, row.model)}`
  const node = `${row.breakNode === undefined ? '' : ` at ${row.breakNode}`}${models}`
  const event = row.breakEventSeq === undefined ? undefined : options.eventOf?.(row.breakEventSeq)
  const source =
    row.breakEventSeq === undefined
      ? ''
      : ` (event ${row.breakEventSeq}${event === undefined ? '' : ` ${event.type}: ${event.description}`})`
  const cost = `${countText(row.lostTokens)} tokens lost, ${dollarText(row.costUsd - row.idealCostUsd)}`
  const change = row.breakChange === undefined ? [] : changeLines(row.breakChange)
  return [
    `break at ${stepLabel(row)}: ${row.breakCause ?? 'unknown cause'}${node}${source}, ${cost}`,
    ...change,
  ].join('\n')
}

/** Seconds as the largest two units: `45s`, `6m`, `6m 30s`, `2h 5m`. */
export function durationText(seconds: number): string {
  const whole = Math.round(seconds)
  if (whole < 60) return `${whole}s`
  if (whole < 3600) {
    const rest = whole % 60
    return `${Math.floor(whole / 60)}m${rest === 0 ? '' : ` ${rest}s`}`
  }
  const minutes = Math.round((whole % 3600) / 60)
  return `${Math.floor(whole / 3600)}h${minutes === 0 ? '' : ` ${minutes}m`}`
}

function percentOf(ratio: number | undefined): string {
  return ratio === undefined ? '-' : `${(ratio * 100).toFixed(1)}%`
}

/** A rounded top for the token axis and four or five evenly spaced ticks up to it. */
function tokenScale(maximum: number): { top: number; ticks: number[] } {
  if (maximum <= 0) return { top: 1, ticks: [0, 1] }
  const raw = maximum / 4
  const magnitude = 10 ** Math.floor(Math.log10(raw))
  const step = ([1, 2, 2.5, 5, 10].find((factor) => factor * magnitude >= raw) ?? 10) * magnitude
  const top = Math.ceil(maximum / step) * step
  const ticks: number[] = []
  for (let tick = 0; tick <= top + step / 2; tick += step) ticks.push(Number(tick.toPrecision(12)))
  return { top, ticks }
}

function compactCount(value: number): string {
  if (value >= 1_000_000) return `${Number((value / 1_000_000).toFixed(2))}M`
  if (value >= 1_000) return `${Number((value / 1_000).toFixed(1))}k`
  return String(value)
}

/** The chart legend as HTML, its swatches drawn the way the chart draws them. */
export function chartLegend(): string {
  const swatch = (shape: string) =>
    `<svg width="18" height="12" viewBox="0 0 18 12" aria-hidden="true">${shape}</svg>`
  const box = (colour: string) => swatch(`<rect x="2" y="1" width="14" height="10" fill="${colour}"/>`)
  const items = [
    [box(CHART_COLOURS.read), 'cache-read tokens'],
    [box(CHART_COLOURS.write), 'cache-write tokens'],
    [box(CHART_COLOURS.uncached), 'uncached tokens'],
    [
      swatch(
        `<line x1="1" x2="17" y1="6" y2="6" stroke="${CHART_COLOURS.hitRatio}" stroke-width="2"/><circle cx="9" cy="6" r="2.6" fill="${CHART_COLOURS.hitRatio}"/>`,
      ),
      'hit ratio (right axis)',
    ],
    [
      swatch(
        `<line x1="2" x2="16" y1="6" y2="6" stroke="#1f1f1f" stroke-width="1.5" stroke-dasharray="3 2"/>`,
      ),
      'ideal read (the gap down to cache-read is lost)',
    ],
    [swatch(`<path d="M4 2 L14 2 L9 10 Z" fill="${CHART_COLOURS.break}"/>`), 'cache break (label: cause)'],
    [
      swatch(
        `<rect x="2" y="1" width="14" height="10" fill="${CHART_COLOURS.read}" fill-opacity="${SPAN_OPACITY}"/>`,
      ),
      'lighter: the mean of a quiet stretch (long sessions)',
    ],
    [
      swatch(
        `<line x1="9" x2="9" y1="0" y2="12" stroke="${CHART_COLOURS.idle}" stroke-width="1.5" stroke-dasharray="3 2"/>`,
      ),
      'idle gap (virtual time)',
    ],
    [
      swatch(
        `<rect x="2" y="1" width="14" height="10" fill="#f2f2f2" stroke="${CHART_COLOURS.failed}" stroke-dasharray="3 2"/><line x1="4" y1="11" x2="14" y2="1" stroke="${CHART_COLOURS.failed}" stroke-width="2"/>`,
      ),
      'failed attempt',
    ],
  ]
  return `<ul class="legend">${items.map(([shape, text]) => `<li>${shape}${escapeHtml(text ?? '')}</li>`).join('')}</ul>`
}
