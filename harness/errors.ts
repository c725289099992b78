// The few error classes of cachelab, tagged so a caller can tell them apart without instanceof chains.

/** What went wrong, in the categories a user acts on differently. */
export type CachelabErrorKind =
  | 'usage' // bad command line or options
  | 'input' // a bad file or value supplied by the user
  | 'log' // a session log that cannot be read or would be corrupted by an append
  | 'provider' // a provider call failed
  | 'invariant' // the loop broke one of its own guarantees

/** The one error class: a kind, a one-line message, and optional details for the user. */
export class CachelabError extends Error {
  readonly kind: CachelabErrorKind
  /** For `log` errors: the file and 1-based line at fault. */
  readonly location?: { file: string; line: number }

  constructor(
    kind: CachelabErrorKind,
    message: string,
    options?: { location?: { file: string; line: number } },
  ) {
    super(message)
    this.name = 'CachelabError'
    this.kind = kind
    if (options?.location !== undefined) this.location = options.location
  }
}

/** Raise an error that names a file and line of a session log. */
export function logError(file: string, line: number, reason: string): CachelabError {
  return new CachelabError('log', `${file}:${line}: ${reason}`, { location: { file, line } })
}

/** Exhaustiveness guard for discriminated unions. */
export function unreachable(value: never): never {
  throw new CachelabError('invariant', `unreachable value: ${JSON.stringify(value)}`)
}

/** Every name must be one of `known`; the first that is not is a usage error naming the known ones. */
export function requireKnown(names: readonly string[], known: readonly string[], what: string): void {
  for (const name of names) {
    if (!known.includes(name))
      throw new CachelabError('usage', `unknown ${what} ${JSON.stringify(name)} (known: ${known.join(', ')})`)
  }
}

/**
 * A file the user named that cannot be read, as an input error that names it and what to do: `what` is
 * how the command line named it (`--replies nope.json`), `remedy` what a missing file asks of the user.
 */
export function unreadableFile(what: string, error: unknown, remedy: string): CachelabError {
  const code = (error as NodeJS.ErrnoException).code
  const reason =
    code === 'ENOENT'
      ? `no such file (from ${process.cwd()}): ${remedy}`
      : code === 'EISDIR'
        ? 'it is a directory: name a file'
        : code === 'EACCES'
          ? 'permission denied'
          : (error as Error).message
  return new CachelabError('input', `cannot read ${what}: ${reason}`)
}
