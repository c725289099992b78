// Plain-text tables for the terminal with a chosen alignment per column, and the number formats the
// compare and check commands share.

/** How a column's cells line up. */
export type Alignment = 'left' | 'right'

/** One column: its title and alignment. */
export interface Column {
  /** Header text. */
  title: string
  /** Text columns go left, numbers right. */
  align: Alignment
}

/** Render rows under a header, each column as wide as its widest cell, two spaces apart. */
export function alignedTable(columns: readonly Column[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = columns.map((column, index) =>
    Math.max(column.title.length, ...rows.map((row) => (row[index] ?? '').length)),
  )
  const line = (cells: readonly string[]) =>
    columns
      .map((column, index) => {
        const cell = cells[index] ?? ''
        const width = widths[index] ?? 0
        return column.align === 'left' ? cell.padEnd(width) : cell.padStart(width)
      })
      .join('  ')
      .trimEnd()
  return [
    line(columns.map((column) => column.title)),
    line(widths.map((width) => '-'.repeat(width))),
    ...rows.map(line),
  ].join('\n')
}

/** A ratio as a percentage with two decimals; `-` when undefined. */
export function percentText(value: number | undefined): string {
  return value === undefined ? '-' : `${(value * 100).toFixed(2)}%`
}

/** A signed difference in percentage points; `-` when undefined. */
export function pointsText(value: number | undefined): string {
  if (value === undefined) return '-'
  const rounded = value.toFixed(2)
  // -0.00 reads as a loss where there is none.
  if (Number(rounded) === 0) return '0.00'
  return value > 0 ? `+${rounded}` : rounded
}

/** US dollars with four decimals. */
export function dollarText(value: number): string {
  return value < 0 ? `-$${(-value).toFixed(4)}` : `$${value.toFixed(4)}`
}

/** A signed dollar difference with four decimals. */
export function signedDollarText(value: number): string {
  const rounded = Math.abs(value).toFixed(4)
  if (Number(rounded) === 0) return '$0.0000'
  return value > 0 ? `+$${rounded}` : `-$${rounded}`
}

/** An integer with thousands separators, independent of the locale. */
export function countText(value: number): string {
  const sign = value < 0 ? '-' : ''
  const digits = String(Math.abs(Math.round(value)))
  if (digits.length <= 3) return sign + digits
  // Below 1e21 the number prints as digits alone: the commas go in by slicing, which a report of many
  // sessions (a count in every cell) does far faster than the regular expression, kept for the rest.
  if (!(Math.abs(value) < 1e21)) return sign + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  const head = digits.length % 3 || 3
  let text = digits.slice(0, head)
  for (let index = head; index < digits.length; index += 3) text += `,${digits.slice(index, index + 3)}`
  return sign + text
}
