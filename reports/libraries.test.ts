import { describe, expect, it } from 'vitest'
import type { LibraryLoopName } from '../harness/loops/libraries/types.ts'
import type { Usage } from '../harness/types.ts'
import type { RequestDigest } from '../providers/wire/digest.ts'
import {
  compareLibraries,
  type LibraryRequest,
  type LibrarySessionRecord,
  librariesCsv,
  libraryStepsCsv,
  librarySummaryLines,
  misreadsOf,
  misreadText,
} from './libraries.ts'
import { librariesSection } from './libraries-html.ts'
import { parseCsv } from './parse.ts'
import { type StepSketch, sessionRows } from './testing.ts'

const digest = (...hashes: string[]): RequestDigest => ({
  segments: hashes.map((hash, index) => [`messages[${index}]`, hash, 100] as const),
  trailing: 0,
  total: hashes.length * 100,
  items: [],
  config: {},
})

const wire = (input: number, cacheRead: number, cacheWrite = 0): Usage => ({
  input,
  uncached: input - cacheRead - cacheWrite,
  cacheRead,
  cacheWrite,
  output: 10,
  raw: {},
})

function session(
  loop: LibraryLoopName,
  sketches: StepSketch[],
  digests: Array<RequestDigest | undefined>,
  requests: Array<Partial<LibraryRequest>>,
): LibrarySessionRecord {
  const rows = sessionRows({ scenario: 'append-only', provider: 'anthropic' }, sketches).map((row) => ({
    ...row,
    loop,
  }))
  return {
    scenario: 'append-only',
    variant: 'default',
    provider: 'anthropic',
    loop,
    versions:
      loop === 'sdk' ? { '@anthropic-ai/sdk': '0.1.0' } : { ai: '5.0.0', '@ai-sdk/anthropic': '2.0.0' },
    caching: `${loop} caching`,
    rows,
    digests,
    requests: rows.map((row, index) => ({
      wire: row.ok ? wire(row.inputTokens, row.cacheReadTokens, row.cacheWriteTokens) : undefined,
      reported: row.ok
        ? {
            input: row.inputTokens,
            cacheRead: row.cacheReadTokens,
            cacheWrite: row.cacheWriteTokens,
            raw: {},
          }
        : undefined,
      refusal: undefined,
      status: row.ok ? 200 : 400,
      breakpoints: 2,
      markers: [],
      ...requests[index],
    })),
    errors: [],
  }
}

const reference = session(
  'sdk',
  [
    { uncached: 1000, write: 4000 },
    { read: 5000, uncached: 200 },
    { read: 5200, uncached: 300 },
  ],
  [digest('s', 'u1'), digest('s', 'u1', 'a1'), digest('s', 'u1', 'a1', 'u2')],
  [{}, {}, {}],
)

describe('the library side-by-side', () => {
  it('names the first request and node where a library differs from the reference, and its cost', () => {
    const library = session(
      'ai-sdk',
      [
        { uncached: 1000, write: 4000 },
        { read: 5000, uncached: 200 },
        { read: 1000, uncached: 4500, lost: 4200 },
      ],
      [digest('s', 'u1'), digest('s', 'u1', 'a1'), digest('s', 'u1', 'X', 'u2')],
      [{}, { breakpoints: 4 }, { breakpoints: 5 }],
    )
    const [sdk, aiSdk] = compareLibraries([reference, library]).comparisons
    expect(sdk?.firstDifference).toBeUndefined()
    expect(aiSdk?.firstDifference).toEqual({ turn: 1, step: 3, node: 'messages[2]' })
    expect(aiSdk?.sameAsReference).toBe(2)
    expect(aiSdk?.maxBreakpoints).toBe(5)
    expect(aiSdk?.lostTokens).toBe(4200)
    expect(aiSdk?.cacheReadVsReference).toBe(-4200)
    expect(aiSdk?.costVsReferenceUsd).toBeGreaterThan(0)
    expect(aiSdk?.versions).toBe('ai@5.0.0 @ai-sdk/anthropic@2.0.0')
    // Token-weighted over the two warm requests: (5,000 + 1,000) / (5,200 + 5,500).
    expect(aiSdk?.warmHitRatio).toBeCloseTo(6000 / 10700, 6)
  })

  it('counts refused requests with the first reason, and breaks as cause@node', () => {
    const library = session(
      'pi-ai',
      [
        { uncached: 1000 },
        { failed: true },
        { read: 900, uncached: 300, breakCause: 'system-replace', breakNode: 'system' },
      ],
      [digest('s', 'u1'), undefined, digest('s2', 'u1', 'a1')],
      [{}, { refusal: 'developer role is not supported', status: 400 }, {}],
    )
    const [, entry] = compareLibraries([reference, library]).comparisons
    expect(entry?.refused).toBe(1)
    expect(entry?.firstRefusal).toBe('developer role is not supported')
    expect(entry?.breaks).toBe(1)
    expect(entry?.firstBreak).toBe('system-replace@system')
  })

  it('names a refused request and differing cache marks where the content agrees with the reference', () => {
    const marked = (markers: string[]) => ({ markers, breakpoints: markers.length })
    const library = session(
      'langchain',
      [{ uncached: 1000, write: 4000 }, { read: 5000, uncached: 200 }, { failed: true }],
      [digest('s', 'u1'), digest('s', 'u1', 'a1'), undefined],
      [
        marked(['system[0]', 'messages[0].content[0]']),
        marked(['system[0]', 'messages[0].content[0]']),
        { ...marked(['system[0]', 'a', 'b', 'c', 'd']), refusal: 'A maximum of 4 blocks', status: 400 },
      ],
    )
    const top = (requests: LibrarySessionRecord['requests']) =>
      requests.map((request) => ({ ...request, markers: ['cache_control'], breakpoints: 1 }))
    const [, entry] = compareLibraries([
      { ...reference, requests: top(reference.requests) },
      library,
    ]).comparisons
    expect(entry?.steps.map((step) => step.firstDifference)).toEqual([
      'cache marks: system[0]',
      'cache marks: system[0]',
      'cache marks: system[0]',
    ])
    const refusedOnly = session(
      'langchain',
      [{ uncached: 1000, write: 4000 }, { read: 5000, uncached: 200 }, { failed: true }],
      [digest('s', 'u1'), digest('s', 'u1', 'a1'), undefined],
      [{}, {}, { refusal: 'refused', status: 400 }],
    )
    const [, refused] = compareLibraries([reference, refusedOnly]).comparisons
    expect(refused?.firstDifference).toEqual({ turn: 1, step: 3, node: 'refused' })
  })

  it('counts the requests whose library dropped breakpoints the loop asked for, with its warning', () => {
    const asked = (requestedBreakpoints: number, breakpoints: number, warnings: string[] = []) => ({
      breakpoints,
      reported: { raw: {}, requestedBreakpoints, warnings },
    })
    const library = session(
      'ai-sdk',
      [
        { uncached: 1000, write: 4000 },
        { read: 5000, uncached: 200 },
        { read: 5200, uncached: 300 },
      ],
      [digest('s', 'u1'), digest('s', 'u1', 'a1'), digest('s', 'u1', 'a1', 'u2')],
      [asked(3, 3), asked(4, 4), asked(5, 4, ['Maximum 4 cache breakpoints exceeded (found 5).'])],
    )
    const [, entry] = compareLibraries([reference, library]).comparisons
    expect(entry?.maxBreakpoints).toBe(4)
    expect(entry?.maxBreakpointsRequested).toBe(5)
    expect(entry?.droppedBreakpointRequests).toBe(1)
    expect(entry?.firstWarning).toBe('Maximum 4 cache breakpoints exceeded (found 5).')
    expect(librarySummaryLines(compareLibraries([reference, library])).join('\n')).toMatch(
      /dropped \(ai-sdk on .*\): 4 of 5 cache marks sent, 1 request/,
    )
  })

  it('finds usage the library misreads, a left-out field counting only when the wire has tokens there', () => {
    expect(
      misreadsOf(wire(6000, 5120, 0), { input: 6000, cacheRead: 5000, raw: {} }).map(misreadText),
    ).toEqual(['reported 5,000 read, wire 5,120'])
    expect(misreadsOf(wire(6000, 0, 4000), { input: 6000, cacheRead: 0, raw: {} }).map(misreadText)).toEqual([
      'reported no write, wire 4,000',
    ])
    expect(misreadsOf(wire(6000, 5120), { input: 6000, cacheRead: 5120, raw: {} })).toEqual([])
    expect(misreadsOf(undefined, undefined)).toEqual([])
  })

  it('writes one libraries.csv line per session and loop and one library-steps.csv line per request', () => {
    const library = session(
      'langchain',
      [
        { uncached: 1000, write: 4000 },
        { read: 5000, uncached: 200 },
      ],
      [digest('s', 'u1'), digest('s', 'u1', 'a1')],
      [{ reported: { input: 1000, cacheRead: 0, raw: {} } }, {}],
    )
    const report = compareLibraries(
      [reference, library],
      [
        {
          name: 'pi-ai',
          reason: 'not installed: @mariozechner/pi-ai',
          install: 'npm i @mariozechner/pi-ai@1',
        },
      ],
    )
    const lines = parseCsv(librariesCsv(report))
    expect(lines.map((line) => line.loop)).toEqual(['sdk', 'langchain'])
    expect(lines[1]).toMatchObject({
      warm_hit_ratio_read_over_input: (5000 / 5200).toFixed(4),
      misread_usage_requests: '1',
      first_misread: 'reported 1,000 input, wire 5,000',
      requests_same_as_reference: '2',
      first_differing_node: '',
    })
    const steps = parseCsv(libraryStepsCsv(report))
    expect(steps).toHaveLength(5)
    expect(steps[3]).toMatchObject({
      loop: 'langchain',
      reported_input_tokens: '1000',
      wire_input_tokens: '5000',
    })
    const summary = librarySummaryLines(report)
    expect(summary.every((line) => line.length <= 100)).toBe(true)
    expect(summary.join('\n')).toContain('absent (skipped; install command on stderr): pi-ai')
    expect(summary.join('\n')).toContain(
      'misread (langchain on append-only/default/anthropic): reported 1,000 input',
    )
  })

  it('shows each session with a row per loop in report.html, and the absent libraries with their install', () => {
    const library = session(
      'langchain',
      [{ uncached: 1000 }, { failed: true }],
      [digest('s', 'u1'), undefined],
      [{}, { refusal: 'more than 4 cache_control blocks', status: 400 }],
    )
    const html = librariesSection(
      compareLibraries(
        [reference, library],
        [{ name: 'pi-ai', reason: 'not installed', install: 'npm i x@1' }],
      ),
    )
    expect(html).toContain('<h3>append-only · default · anthropic</h3>')
    expect(html).toContain('1 — more than 4 cache_control blocks')
    expect(html).toContain('<strong>pi-ai</strong>: not installed — install: <code>npm i x@1</code>')
    expect(librariesSection(undefined)).toBe('')
    expect(librariesSection({ comparisons: [], absent: [] })).toBe('')
  })
})
