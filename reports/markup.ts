// Text into HTML and SVG safely, and numbers into coordinates that print the same on every run.

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/** Text made safe for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character] ?? character)
}

/** A coordinate with at most two decimals and no trailing zeros. */
export function coordinate(value: number): string {
  // `toFixed(2)` with its trailing zeros cut is what printing `Number(value.toFixed(2))` gives while the
  // value has at most 15 significant digits (below 1e13), at a quarter of the cost: a report of many
  // sessions prints millions of coordinates. Larger values, and NaN or infinities, take the long way.
  if (!(Math.abs(value) < 1e13)) {
    const rounded = Number(value.toFixed(2))
    return String(Object.is(rounded, -0) ? 0 : rounded)
  }
  const fixed = value.toFixed(2)
  const end = fixed.length
  const text =
    fixed.charCodeAt(end - 1) !== ZERO
      ? fixed
      : fixed.charCodeAt(end - 2) !== ZERO
        ? fixed.slice(0, end - 1)
        : fixed.slice(0, end - 3)
  return text === '-0' ? '0' : text
}

const ZERO = 48
