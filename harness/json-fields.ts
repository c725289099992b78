// Reading fields of untyped JSON (a wire body, a usage object, a JSON schema) without a cast at each step.

/** Whether the value is a JSON object: not an array, not null. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The value's fields: a JSON object as it is; an array, a scalar, null or undefined as no fields. */
export function asRecord(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {}
}

/** The value when it is a number, else undefined (a missing or mistyped count). */
export function optionalNumber(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined
}
