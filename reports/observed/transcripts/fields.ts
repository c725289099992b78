// Reading fields of transcript JSON, which is other programs' data: every accessor checks the type and
// answers undefined (or empty) for anything else, so a reader never trusts a shape it did not check.

/** A JSON object as read from a transcript line. */
export type Fields = Record<string, unknown>

/** The value as an object, or an empty one. */
export function fieldsOf(value: unknown): Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : {}
}

/** The value when it is a string. */
export function textOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** The value when it is a finite number. */
export function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined
}

/** The value as an array, or an empty one. */
export function listOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : []
}

/** Milliseconds since the epoch as ISO 8601, or undefined for what is not a valid time. */
export function isoOf(milliseconds: number | undefined): string | undefined {
  if (milliseconds === undefined) return undefined
  const date = new Date(milliseconds)
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}
