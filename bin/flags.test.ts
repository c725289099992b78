import { describe, expect, it } from 'vitest'
import { CachelabError } from '../harness/errors.ts'
import { CHECK_FLAGS, COMMAND_SPECS, RUN_FLAGS } from './commands.ts'
import { parse } from './flags.ts'
import { commandHelp } from './help.ts'

/** The message of the usage error `body` throws. */
function usage(body: () => unknown): string {
  try {
    body()
  } catch (error) {
    expect(error).toBeInstanceOf(CachelabError)
    expect((error as CachelabError).kind).toBe('usage')
    return (error as CachelabError).message
  }
  throw new Error('expected a usage error')
}

describe('parse', () => {
  it('gives each flag its value under its own name, booleans as booleans', () => {
    const { values, positionals } = parse(
      ['--scenario', 'append-only', '--json', '--otlp-file=x.json'],
      RUN_FLAGS,
    )
    expect(values).toEqual({ scenario: 'append-only', json: true, 'otlp-file': 'x.json' })
    expect(positionals).toEqual([])
  })

  it('takes --no-NAME for a boolean, and leaves a flag not given out', () => {
    expect(parse(['--no-stream'], RUN_FLAGS).values).toEqual({ stream: false })
    expect(parse([], RUN_FLAGS).values).toEqual({})
  })

  it('hands a value that starts with a dash to the command, whose check can name it', () => {
    expect(parse(['--tolerance', '-3'], CHECK_FLAGS).values.tolerance).toBe('-3')
  })

  it('names the nearest known flag for an unknown one', () => {
    expect(usage(() => parse(['--scenaro', 'x'], RUN_FLAGS))).toBe(
      "unknown option '--scenaro' (did you mean --scenario?)",
    )
    expect(usage(() => parse(['--zzzzzz'], RUN_FLAGS))).toBe("unknown option '--zzzzzz'")
  })

  it('refuses a missing value, an empty one and an argument where the command takes none', () => {
    expect(usage(() => parse(['--out'], RUN_FLAGS))).toBe('--out needs a value: --out DIR')
    expect(usage(() => parse(['--out', ' '], RUN_FLAGS))).toBe('--out needs a value, not an empty string')
    expect(usage(() => parse(['append-only'], RUN_FLAGS))).toBe(
      'unexpected argument "append-only": this command takes flags only (--NAME VALUE)',
    )
    expect(parse(['a', 'b'], {}, true).positionals).toEqual(['a', 'b'])
  })
})

describe('the help of each command', () => {
  it.each(Object.keys(COMMAND_SPECS) as (keyof typeof COMMAND_SPECS)[])(
    '%s: its usage line and every flag of its table, described',
    (name) => {
      const help = commandHelp(name)
      expect(help).toMatch(new RegExp(`^Usage: cachelab ${name} \\[options\\]`))
      for (const [flag, spec] of Object.entries(COMMAND_SPECS[name].flags)) {
        expect(help).toContain(`--${flag}`)
        expect(spec.description, `${name} --${flag}`).toBeTruthy()
      }
      expect(help).toContain('-h, --help')
    },
  )
})
