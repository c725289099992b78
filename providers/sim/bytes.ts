// Estimated heap bytes of what the simulators and the token memo keep, measured once against V8's heap
// (notes/2026-12-02-bounded-memory.md): deterministic, so a memory budget prunes at the same request on
// every run.

/** Bytes of a string: V8 keeps one byte a character for Latin-1 text, two otherwise, after a header. */
export function stringBytes(text: string): number {
  return STRING_HEADER_BYTES + (WIDE.test(text) ? 2 : 1) * text.length
}

const STRING_HEADER_BYTES = 16

/** A character outside Latin-1: the string is then stored two bytes a character. */
const WIDE = /[\u0100-\uffff]/
