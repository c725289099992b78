// The per-session chart of report.html as inline SVG: one stacked bar per request (cache-read, cache-write,
// uncached tokens), the hit ratio as a line on a 0–100% right axis, breaks marked with their cause.

import { breakDescription, stepLabel } from './labels.ts'
import { coordinate, escapeHtml } from './markup.ts'
import { countText } from './text-table.ts'
import type { StepRow } from './types.ts'

/** Okabe–Ito colours, distinguishable with the common colour-vision deficiencies. */
export const CHART_COLOURS = {
  read: '#0072B2',
  write: '#E69F00',
  uncached: '#CC79A7',
  hitRatio: '#1f1f1f',
  break: '#D55E00',
  failed: '#8a8a8a',
} as const

const PLOT_HEIGHT = 236
const MARGIN = { right: 60, bottom: 48, left: 68 }
/** Room above the plot for break markers and their labels; less when the session has no break. */
const TOP_WITH_BREAKS = 64
const TOP_WITHOUT_BREAKS = 20
const BASE_PLOT_WIDTH = 1000
/** Below this many units per request the chart grows wider and scrolls instead. */
const MIN_BAND = 5
const LABEL_SPACING = 36
const LABEL_FONT = 10.5
const LABEL_CHARACTER_WIDTH = 6.2
const BREAK_LANES = 3

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
  /** Horizontal room per request. */
  band: number
  barWidth: number
  /** Token-axis top and ticks. */
  scale: { top: number; ticks: number[] }
}

/** The chart of one session's rows; `id` makes its element ids unique in the page. */
export function sessionChart(rows: readonly StepRow[], id: string, title: string): string {
  const count = Math.max(rows.length, 1)
  const breaks = rows.filter((row) => row.breakCause !== undefined).length
  const plotTop = breaks > 0 ? TOP_WITH_BREAKS : TOP_WITHOUT_BREAKS
  const plotWidth = Math.max(BASE_PLOT_WIDTH, count * MIN_BAND)
  const band = plotWidth / count
  const geometry: Geometry = {
    id,
    width: MARGIN.left + plotWidth + MARGIN.right,
    height: plotTop + PLOT_HEIGHT + MARGIN.bottom,
    plotTop,
    plotWidth,
    plotHeight: PLOT_HEIGHT,
    bottom: plotTop + PLOT_HEIGHT,
    band,
    barWidth: Math.max(1, Math.min(band * 0.72, 48)),
    scale: tokenScale(Math.max(0, ...rows.map((row) => Math.max(row.inputTokens, row.idealCacheReadTokens)))),
  }
  const { width, height } = geometry
  return [
    `<svg class="chart${plotWidth > BASE_PLOT_WIDTH ? ' wide' : ''}" id="${id}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-labelledby="${id}-title ${id}-desc">`,
    `<title id="${id}-title">${escapeHtml(title)}</title>`,
    `<desc id="${id}-desc">${rows.length} requests, ${breaks} cache ${breaks === 1 ? 'break' : 'breaks'}. Bars: cache-read, cache-write and uncached input tokens per request; line: hit ratio.</desc>`,
    `<defs><pattern id="${id}-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f2f2f2"/><line x1="0" y1="0" x2="0" y2="6" stroke="${CHART_COLOURS.failed}" stroke-width="2"/></pattern></defs>`,
    axes(rows, geometry),
    breakColumns(rows, geometry),
    bars(rows, geometry),
    hitRatioLine(rows, geometry),
    breakMarkers(rows, geometry),
    `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotWidth}" y1="${geometry.bottom}" y2="${geometry.bottom}" stroke="#5f6368"/>`,
    '</svg>',
  ].join('\n')
}

const centreOf = (geometry: Geometry, index: number) => MARGIN.left + geometry.band * (index + 0.5)
const tokensY = (geometry: Geometry, tokens: number) =>
  geometry.bottom - (tokens / geometry.scale.top) * geometry.plotHeight
const ratioY = (geometry: Geometry, ratio: number) => geometry.bottom - ratio * geometry.plotHeight

/** Grid lines, both axes' ticks and titles, and the x labels (thinned so they do not collide). */
function axes(rows: readonly StepRow[], geometry: Geometry): string {
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
  for (const [index, row] of rows.entries()) {
    if (index % every !== 0) continue
    parts.push(
      `<text x="${coordinate(centreOf(geometry, index))}" y="${bottom + 16}" text-anchor="middle">${escapeHtml(stepLabel(row))}</text>`,
    )
  }
  parts.push('</g>')
  return parts.join('')
}

/** A tinted column behind each break, so a break reads as a highlighted request. */
function breakColumns(rows: readonly StepRow[], geometry: Geometry): string {
  const parts: string[] = ['<g class="break-columns">']
  for (const [index, row] of rows.entries()) {
    if (row.breakCause === undefined) continue
    parts.push(
      `<rect x="${coordinate(centreOf(geometry, index) - geometry.band / 2)}" y="${geometry.plotTop}" width="${coordinate(geometry.band)}" height="${geometry.plotHeight}" fill="${CHART_COLOURS.break}" fill-opacity="0.09"/>`,
    )
  }
  parts.push('</g>')
  return parts.join('')
}

/** One group per request: stacked buckets and the ideal-read mark, or a hatched column for a failed attempt. */
function bars(rows: readonly StepRow[], geometry: Geometry): string {
  const parts: string[] = ['<g class="bars">']
  const widthText = coordinate(geometry.barWidth)
  for (const [index, row] of rows.entries()) {
    const centre = centreOf(geometry, index)
    const left = coordinate(centre - geometry.barWidth / 2)
    if (!row.ok) {
      parts.push(
        `<g class="bar failed" data-index="${index}"><title>${escapeHtml(barTitle(row))}</title>`,
        `<rect x="${left}" y="${geometry.plotTop}" width="${widthText}" height="${geometry.plotHeight}" fill="url(#${geometry.id}-hatch)" stroke="${CHART_COLOURS.failed}" stroke-dasharray="3 2"/></g>`,
      )
      continue
    }
    const segments: string[] = []
    let base = 0
    for (const [tokens, colour] of [
      [row.cacheReadTokens, CHART_COLOURS.read],
      [row.cacheWriteTokens, CHART_COLOURS.write],
      [row.uncachedTokens, CHART_COLOURS.uncached],
    ] as const) {
      if (tokens > 0) {
        const top = tokensY(geometry, base + tokens)
        segments.push(
          `<rect x="${left}" y="${coordinate(top)}" width="${widthText}" height="${coordinate(tokensY(geometry, base) - top)}" fill="${colour}"/>`,
        )
      }
      base += tokens
    }
    if (row.lostTokens > 0) {
      const at = coordinate(tokensY(geometry, row.idealCacheReadTokens))
      segments.push(
        `<line class="ideal" x1="${left}" x2="${coordinate(centre + geometry.barWidth / 2)}" y1="${at}" y2="${at}" stroke="#1f1f1f" stroke-width="1.5" stroke-dasharray="3 2"/>`,
      )
    }
    parts.push(
      `<g class="bar${row.breakCause === undefined ? '' : ' break'}" data-index="${index}"><title>${escapeHtml(barTitle(row))}</title>${segments.join('')}</g>`,
    )
  }
  parts.push('</g>')
  return parts.join('')
}

/** The hit ratio over the bars, with a light halo so it stays legible on any bar colour; dots when there is room. */
function hitRatioLine(rows: readonly StepRow[], geometry: Geometry): string {
  const points = rows.flatMap((row, index) =>
    row.ok && row.hitRatio !== undefined
      ? [{ x: centreOf(geometry, index), y: ratioY(geometry, row.hitRatio), row }]
      : [],
  )
  if (points.length === 0) return ''
  const path = points
    .map((point, index) => `${index === 0 ? 'M' : 'L'}${coordinate(point.x)} ${coordinate(point.y)}`)
    .join(' ')
  const parts = [
    `<g class="hit-ratio" fill="none"><path d="${path}" stroke="#ffffff" stroke-width="4" stroke-linejoin="round" stroke-opacity="0.85"/>`,
    `<path d="${path}" stroke="${CHART_COLOURS.hitRatio}" stroke-width="1.75" stroke-linejoin="round"/>`,
  ]
  if (geometry.band >= 10) {
    for (const point of points) {
      parts.push(
        `<circle cx="${coordinate(point.x)}" cy="${coordinate(point.y)}" r="2.6" fill="${CHART_COLOURS.hitRatio}" stroke="#ffffff"><title>${escapeHtml(`${stepLabel(point.row)}: hit ${percentOf(point.row.hitRatio)}`)}</title></circle>`,
      )
    }
  }
  parts.push('</g>')
  return parts.join('')
}

/** A marker at the top of each break column, its cause as a tooltip and, where there is room, a label. */
function breakMarkers(rows: readonly StepRow[], geometry: Geometry): string {
  const { width, plotTop } = geometry
  const laneEnds: number[] = new Array<number>(BREAK_LANES).fill(Number.NEGATIVE_INFINITY)
  const markers: string[] = ['<g class="breaks">']
  for (const [index, row] of rows.entries()) {
    if (row.breakCause === undefined) continue
    const x = centreOf(geometry, index)
    const top = plotTop - 4
    const tooltip = escapeHtml(breakTitle(row))
    markers.push(
      `<g class="break-marker" data-index="${index}"><title>${tooltip}</title>`,
      `<path d="M${coordinate(x - 5)} ${coordinate(top - 8)} L${coordinate(x + 5)} ${coordinate(top - 8)} L${coordinate(x)} ${coordinate(top)} Z" fill="${CHART_COLOURS.break}"/>`,
    )
    const label = row.breakCause
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
    markers.push('</g>')
  }
  markers.push('</g>')
  return markers.join('')
}

function barTitle(row: StepRow): string {
  const where = `turn ${row.turn} step ${row.step}${row.attempt === 0 ? '' : ` attempt ${row.attempt}`}`
  if (!row.ok) return `${where}: failed attempt`
  const lines = [
    `${where}${row.cold ? ' (cold: first request)' : ''}`,
    `input ${countText(row.inputTokens)} = read ${countText(row.cacheReadTokens)} + write ${countText(row.cacheWriteTokens)} + uncached ${countText(row.uncachedTokens)}`,
    `hit ratio ${percentOf(row.hitRatio)}`,
  ]
  if (row.lostTokens > 0)
    lines.push(`ideal read ${countText(row.idealCacheReadTokens)}, lost ${countText(row.lostTokens)}`)
  if (row.breakCause !== undefined) lines.push(breakTitle(row))
  return lines.join('\n')
}

function breakTitle(row: StepRow): string {
  return `break at ${stepLabel(row)}: ${breakDescription(row)}`
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
        `<rect x="2" y="1" width="14" height="10" fill="#f2f2f2" stroke="${CHART_COLOURS.failed}" stroke-dasharray="3 2"/><line x1="4" y1="11" x2="14" y2="1" stroke="${CHART_COLOURS.failed}" stroke-width="2"/>`,
      ),
      'failed attempt',
    ],
  ]
  return `<ul class="legend">${items.map(([shape, text]) => `<li>${shape}${escapeHtml(text ?? '')}</li>`).join('')}</ul>`
}
