// Client libraries side by side: per (scenario, variant, provider, loop) what a library's requests did to
// the cache and the bill (warm hit ratio, lost tokens and dollars, refused requests, breaks, the
// breakpoints it sent), where its wire requests first differ from the reference loop's (the official
// SDKs), and the usage it misreads to its caller against the wire's. Written as libraries.csv and
// library-steps.csv, shown in report.html and summed up in the terminal.

import { stringify } from 'csv-stringify/sync'
import type { LibraryLoopName, ReportedUsage } from '../harness/loops/libraries/types.ts'
import { REFERENCE_LOOP } from '../harness/loops/libraries/types.ts'
import type { ProviderId, Usage } from '../harness/types.ts'
import type { RequestDigest } from '../providers/wire/digest.ts'
import { firstDifference } from './loops.ts'
import { summarize } from './summary.ts'
import {
  alignedTable,
  type Column,
  countText,
  dollarText,
  percentText,
  signedDollarText,
} from './text-table.ts'
import type { StepRow } from './types.ts'

/** One request a library loop sent: what the wire served and what the library told its caller. */
export interface LibraryRequest {
  /** What the simulator served; undefined for a refused or failed request. */
  wire: Usage | undefined
  /** What the library reported for it; undefined when it reported nothing. */
  reported: ReportedUsage | undefined
  /** The API's refusal, when it refused the request. */
  refusal: string | undefined
  status: number
  /** Cache markers (`cache_control`) in the body. */
  breakpoints: number
  /** Where those markers sit, as JSON paths in document order. */
  markers: readonly string[]
}

/** One session a library loop ran, as the run hands it to the comparison. */
export interface LibrarySessionRecord {
  scenario: string
  variant: string
  provider: ProviderId
  loop: LibraryLoopName
  /** The installed versions of the library's packages, by package name. */
  versions: Readonly<Record<string, string>>
  /** How the loop asks for caching on the provider (`LibraryLoop.caching`). */
  caching: string
  /** Its rows; `digests[i]` and `requests[i]` belong to `rows[i]`. */
  rows: readonly StepRow[]
  digests: ReadonlyArray<RequestDigest | undefined>
  requests: readonly LibraryRequest[]
  /** Errors the library raised, per turn that stopped on one. */
  errors: ReadonlyArray<{ turn: number; message: string }>
}

/** A library loop the run asked for but could not load. */
export interface AbsentLibrary {
  name: LibraryLoopName
  /** Why: the packages not installed, or the loader's error. */
  reason: string
  /** The `npm i` that installs its packages at the pinned versions. */
  install: string
}

/** A usage field the library reported otherwise than the wire (or did not report while the wire had it). */
export interface Misread {
  field: 'input' | 'cacheRead' | 'cacheWrite'
  /** What the library said; undefined when it did not report the field. */
  reported: number | undefined
  wire: number
}

/** One request of a library session beside the reference loop's request at the same turn, step and attempt. */
export interface LibraryStep {
  turn: number
  step: number
  attempt: number
  request: LibraryRequest
  row: StepRow
  /** The first wire node where it differs from the reference's request; undefined when they agree. */
  firstDifference: string | undefined
  /** Whether the reference loop sent a request at this position (false for the reference itself too). */
  referenced: boolean
  /** The reference's cache read at this position. */
  referenceCacheRead: number | undefined
  misreads: Misread[]
}

/** One (scenario, variant, provider, loop) of the side-by-side. */
export interface LibraryComparison {
  scenario: string
  variant: string
  provider: ProviderId
  loop: LibraryLoopName
  /** `package@version` of every package of the library, space-separated. */
  versions: string
  caching: string
  requests: number
  refused: number
  /** The first refusal's reason. */
  firstRefusal: string | undefined
  /** Token-weighted cache read / input tokens of the successful requests after the first. */
  warmHitRatio: number | undefined
  inputTokens: number
  cacheReadTokens: number
  /** Tokens the requests would have read had each extended the previous one, beyond what they read. */
  lostTokens: number
  /** What those lost tokens cost: actual cost minus the cost at the ideal read. */
  lostUsd: number
  costUsd: number
  /** The most cache markers one request carried. */
  maxBreakpoints: number
  /** The most breakpoints the loop asked the library for on one request, when it said. */
  maxBreakpointsRequested: number | undefined
  /** Requests that carried fewer cache markers than the loop asked for: breakpoints the library dropped. */
  droppedBreakpointRequests: number
  /** The first warning the library gave its caller. */
  firstWarning: string | undefined
  /** Cost minus the reference loop's on the same session; undefined for the reference or without it. */
  costVsReferenceUsd: number | undefined
  /** Cache-read tokens minus the reference loop's. */
  cacheReadVsReference: number | undefined
  /** The first request that differs from the reference's: `turn.step node`; undefined when none does. */
  firstDifference: { turn: number; step: number; node: string } | undefined
  /** Requests whose wire request is the reference's node for node. */
  sameAsReference: number
  /** Requests whose reported usage differs from the wire's. */
  misread: number
  /** The first such request's first difference, as `reported 5,000 read, wire 5,120`. */
  firstMisread: string | undefined
  breaks: number
  /** The first break as `cause@node`. */
  firstBreak: string | undefined
  /** Turns the library stopped on an error. */
  errors: number
  steps: LibraryStep[]
}

/** The side-by-side of a run. */
export interface LibraryReport {
  comparisons: LibraryComparison[]
  absent: AbsentLibrary[]
}

const FIELD_WORDS: Readonly<Record<Misread['field'], string>> = {
  input: 'input',
  cacheRead: 'read',
  cacheWrite: 'write',
}

/**
 * Where the library's reported usage differs from the wire's. A field the library leaves out counts only
 * when the wire has tokens there: its caller sees none. Nothing is compared for a request without usage.
 */
export function misreadsOf(wire: Usage | undefined, reported: ReportedUsage | undefined): Misread[] {
  if (wire === undefined) return []
  const pairs: Array<[Misread['field'], number | undefined, number]> = [
    ['input', reported?.input, wire.input],
    ['cacheRead', reported?.cacheRead, wire.cacheRead ?? 0],
    ['cacheWrite', reported?.cacheWrite, wire.cacheWrite ?? 0],
  ]
  return pairs
    .filter(([, said, served]) => (said === undefined ? served > 0 : said !== served))
    .map(([field, said, served]) => ({ field, reported: said, wire: served }))
}

/** A misread as people read it: `reported 5,000 read, wire 5,120`. */
export function misreadText(misread: Misread): string {
  const word = FIELD_WORDS[misread.field]
  const said = misread.reported === undefined ? `no ${word}` : `${countText(misread.reported)} ${word}`
  return `reported ${said}, wire ${countText(misread.wire)}`
}

const positionKey = (row: Pick<StepRow, 'turn' | 'step' | 'attempt'>) =>
  `${row.turn}.${row.step}.${row.attempt}`
const sessionKey = (session: Pick<LibrarySessionRecord, 'scenario' | 'variant' | 'provider'>) =>
  `${session.scenario}\u0000${session.variant}\u0000${session.provider}`

/** Compare every library session with the reference loop's session of the same scenario, variant and provider. */
export function compareLibraries(
  sessions: readonly LibrarySessionRecord[],
  absent: readonly AbsentLibrary[] = [],
): LibraryReport {
  const references = new Map(
    sessions
      .filter((session) => session.loop === REFERENCE_LOOP)
      .map((session) => [sessionKey(session), session]),
  )
  return {
    comparisons: sessions.map((session) => compareSession(session, references.get(sessionKey(session)))),
    absent: [...absent],
  }
}

function compareSession(
  session: LibrarySessionRecord,
  reference: LibrarySessionRecord | undefined,
): LibraryComparison {
  const isReference = session.loop === REFERENCE_LOOP
  const other = isReference ? undefined : reference
  const referenceAt = new Map(other?.rows.map((row, index) => [positionKey(row), index]))
  const steps = session.rows.map((row, index): LibraryStep => {
    const request = session.requests[index] as LibraryRequest
    const position = referenceAt.get(positionKey(row))
    const referenceRow = position === undefined ? undefined : other?.rows[position]
    const mine = session.digests[index]
    const theirs = position === undefined ? undefined : other?.digests[position]
    const theirRequest = position === undefined ? undefined : other?.requests[position]
    return {
      turn: row.turn,
      step: row.step,
      attempt: row.attempt,
      request,
      row,
      firstDifference: requestDifference(mine, theirs, request, theirRequest),
      referenced: referenceRow !== undefined,
      referenceCacheRead: referenceRow?.ok === true ? referenceRow.cacheReadTokens : undefined,
      misreads: misreadsOf(request.wire, request.reported),
    }
  })
  const ok = session.rows.filter((row) => row.ok)
  const sum = (rows: readonly StepRow[], pick: (row: StepRow) => number) =>
    rows.reduce((total, row) => total + pick(row), 0)
  const costUsd = sum(ok, (row) => row.costUsd)
  const cacheReadTokens = sum(ok, (row) => row.cacheReadTokens)
  const refusals = session.requests.flatMap((request) =>
    request.refusal === undefined ? [] : [request.refusal],
  )
  const differing = other === undefined ? undefined : steps.find((step) => differsFromReference(step))
  const misread = steps.filter((step) => step.misreads.length > 0)
  const firstMisread = misread[0]?.misreads[0]
  const broken = ok.filter((row) => row.breakCause !== undefined)
  const firstBroken = broken[0]
  const referenceOk = other?.rows.filter((row) => row.ok)
  const requested = session.requests.flatMap((request) =>
    request.reported?.requestedBreakpoints === undefined ? [] : [request.reported.requestedBreakpoints],
  )
  return {
    scenario: session.scenario,
    variant: session.variant,
    provider: session.provider,
    loop: session.loop,
    versions: Object.entries(session.versions)
      .map(([name, version]) => `${name}@${version}`)
      .join(' '),
    caching: session.caching,
    requests: session.rows.length,
    refused: refusals.length,
    firstRefusal: refusals[0],
    warmHitRatio: summarize(session.rows)[0]?.hitRatioWarm,
    inputTokens: sum(ok, (row) => row.inputTokens),
    cacheReadTokens,
    lostTokens: sum(ok, (row) => row.lostTokens),
    lostUsd: sum(ok, (row) => row.costUsd - row.idealCostUsd),
    costUsd,
    maxBreakpoints: Math.max(0, ...session.requests.map((request) => request.breakpoints)),
    maxBreakpointsRequested: requested.length === 0 ? undefined : Math.max(...requested),
    droppedBreakpointRequests: session.requests.filter(
      (request) => (request.reported?.requestedBreakpoints ?? 0) > request.breakpoints,
    ).length,
    firstWarning: session.requests.flatMap((request) => request.reported?.warnings ?? [])[0],
    costVsReferenceUsd:
      referenceOk === undefined ? undefined : costUsd - sum(referenceOk, (row) => row.costUsd),
    cacheReadVsReference:
      referenceOk === undefined
        ? undefined
        : cacheReadTokens - sum(referenceOk, (row) => row.cacheReadTokens),
    firstDifference:
      differing === undefined
        ? undefined
        : {
            turn: differing.turn,
            step: differing.step,
            node: differing.firstDifference ?? 'no reference request',
          },
    sameAsReference:
      other === undefined ? 0 : steps.filter((step) => step.referenced && !differsFromReference(step)).length,
    misread: misread.length,
    firstMisread: firstMisread === undefined ? undefined : misreadText(firstMisread),
    breaks: broken.length,
    firstBreak:
      firstBroken === undefined ? undefined : `${firstBroken.breakCause}@${firstBroken.breakNode ?? '?'}`,
    errors: session.errors.length,
    steps,
  }
}

/**
 * Where a library's request first differs from the reference's at the same position: the first wire node
 * whose content differs; else where the cache marks differ (`cache marks: system[0]`, the library's
 * mark, or the reference's where the library has none); else that one side was refused or failed;
 * undefined when they agree or the reference sent none there.
 */
export function requestDifference(
  mine: RequestDigest | undefined,
  theirs: RequestDigest | undefined,
  request: LibraryRequest,
  reference: LibraryRequest | undefined,
): string | undefined {
  if (reference === undefined) return undefined
  if (mine !== undefined && theirs !== undefined) {
    const node = firstDifference(theirs, mine)
    if (node !== undefined) return node
  }
  const marks = markerDifference(request.markers, reference.markers)
  if (marks !== undefined) return `cache marks: ${marks}`
  if (mine === undefined && theirs !== undefined) return request.refusal !== undefined ? 'refused' : 'failed'
  if (mine !== undefined && theirs === undefined) return 'the reference failed'
  return undefined
}

/** The first cache-mark path where two requests differ: the library's, or the reference's it lacks. */
function markerDifference(mine: readonly string[], theirs: readonly string[]): string | undefined {
  for (let index = 0; index < Math.max(mine.length, theirs.length); index += 1)
    if (mine[index] !== theirs[index]) return mine[index] ?? `none where the reference marks ${theirs[index]}`
  return undefined
}

/** A request differs from the reference's when its wire differs or the reference sent none there. */
function differsFromReference(step: LibraryStep): boolean {
  return !step.referenced || step.firstDifference !== undefined
}

/** The libraries.csv columns, in order. */
export const LIBRARY_COLUMNS = [
  'scenario',
  'variant',
  'provider',
  'loop',
  'versions',
  'caching',
  'requests',
  'refused_requests',
  'first_refusal',
  'warm_hit_ratio_read_over_input',
  'input_tokens',
  'cache_read_tokens',
  'lost_tokens',
  'lost_usd',
  'cost_usd',
  'cost_vs_reference_usd',
  'cache_read_vs_reference_tokens',
  'max_breakpoints_sent',
  'max_breakpoints_requested',
  'requests_dropping_breakpoints',
  'first_library_warning',
  'requests_same_as_reference',
  'first_differing_step',
  'first_differing_node',
  'misread_usage_requests',
  'first_misread',
  'breaks',
  'first_break',
  'turn_errors',
] as const

/** The library-steps.csv columns, in order. */
export const LIBRARY_STEP_COLUMNS = [
  'scenario',
  'variant',
  'provider',
  'loop',
  'turn',
  'step',
  'attempt',
  'status',
  'refusal',
  'breakpoints_sent',
  'breakpoints_requested',
  'cache_marks',
  'library_warnings',
  'wire_input_tokens',
  'wire_cache_read_tokens',
  'wire_cache_write_tokens',
  'reported_input_tokens',
  'reported_cache_read_tokens',
  'reported_cache_write_tokens',
  'misread',
  'first_differing_node',
  'reference_cache_read_tokens',
] as const

const cell = (value: string | number | undefined) => (value === undefined ? '' : String(value))
const ratio = (value: number | undefined) => (value === undefined ? '' : value.toFixed(4))
const dollars = (value: number | undefined) => (value === undefined ? '' : value.toFixed(6))

/** libraries.csv: one line per (scenario, variant, provider, loop). */
export function librariesCsv(report: LibraryReport): string {
  const records = report.comparisons.map((entry) => [
    entry.scenario,
    entry.variant,
    entry.provider,
    entry.loop,
    entry.versions,
    entry.caching,
    cell(entry.requests),
    cell(entry.refused),
    cell(entry.firstRefusal),
    ratio(entry.warmHitRatio),
    cell(entry.inputTokens),
    cell(entry.cacheReadTokens),
    cell(entry.lostTokens),
    dollars(entry.lostUsd),
    dollars(entry.costUsd),
    dollars(entry.costVsReferenceUsd),
    cell(entry.cacheReadVsReference),
    cell(entry.maxBreakpoints),
    cell(entry.maxBreakpointsRequested),
    cell(entry.droppedBreakpointRequests),
    cell(entry.firstWarning),
    entry.loop === REFERENCE_LOOP ? '' : cell(entry.sameAsReference),
    entry.firstDifference === undefined ? '' : `${entry.firstDifference.turn}.${entry.firstDifference.step}`,
    cell(entry.firstDifference?.node),
    cell(entry.misread),
    cell(entry.firstMisread),
    cell(entry.breaks),
    cell(entry.firstBreak),
    cell(entry.errors),
  ])
  return stringify([[...LIBRARY_COLUMNS], ...records])
}

/** library-steps.csv: one line per request of every library session. */
export function libraryStepsCsv(report: LibraryReport): string {
  const records = report.comparisons.flatMap((entry) =>
    entry.steps.map((step) => [
      entry.scenario,
      entry.variant,
      entry.provider,
      entry.loop,
      cell(step.turn),
      cell(step.step),
      cell(step.attempt),
      cell(step.request.status),
      cell(step.request.refusal),
      cell(step.request.breakpoints),
      cell(step.request.reported?.requestedBreakpoints),
      step.request.markers.join(' '),
      (step.request.reported?.warnings ?? []).join('; '),
      cell(step.request.wire?.input),
      cell(step.request.wire?.cacheRead),
      cell(step.request.wire?.cacheWrite),
      cell(step.request.reported?.input),
      cell(step.request.reported?.cacheRead),
      cell(step.request.reported?.cacheWrite),
      step.misreads.map(misreadText).join('; '),
      entry.loop === REFERENCE_LOOP
        ? ''
        : step.referenced
          ? cell(step.firstDifference)
          : 'no reference request',
      cell(step.referenceCacheRead),
    ]),
  )
  return stringify([[...LIBRARY_STEP_COLUMNS], ...records])
}

const SUMMARY_COLUMNS: readonly Column[] = [
  { title: '  loop', align: 'left' },
  { title: 'warm hit', align: 'right' },
  { title: 'lost', align: 'right' },
  { title: 'lost $', align: 'right' },
  { title: 'vs ref $', align: 'right' },
  { title: 'bp', align: 'right' },
  { title: 'refused', align: 'right' },
  { title: 'misread', align: 'right' },
  { title: 'first diff', align: 'left' },
]

/** Cut a cell to `width` characters, marking the cut. */
function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`
}

/**
 * The side-by-side for the terminal, within 100 columns: per session a line, then one line per loop; then
 * the first refusal and misread of each session, and the libraries that were absent.
 */
export function librarySummaryLines(report: LibraryReport): string[] {
  const rows = report.comparisons.map((entry) => [
    `  ${entry.loop}`,
    percentText(entry.warmHitRatio),
    countText(entry.lostTokens),
    dollarText(entry.lostUsd),
    entry.costVsReferenceUsd === undefined ? '-' : signedDollarText(entry.costVsReferenceUsd),
    entry.maxBreakpointsRequested !== undefined && entry.maxBreakpointsRequested > entry.maxBreakpoints
      ? `${entry.maxBreakpoints}/${entry.maxBreakpointsRequested}`
      : String(entry.maxBreakpoints),
    String(entry.refused),
    String(entry.misread),
    entry.loop === REFERENCE_LOOP
      ? '(reference)'
      : entry.firstDifference === undefined
        ? 'none'
        : clip(
            `${entry.firstDifference.turn}.${entry.firstDifference.step} ${entry.firstDifference.node}`,
            22,
          ),
  ])
  const lines: string[] = []
  if (report.comparisons.length > 0) {
    const [head = '', rule = '', ...body] = alignedTable(SUMMARY_COLUMNS, rows).split('\n')
    lines.push(head, rule)
    let previous = ''
    for (const [index, entry] of report.comparisons.entries()) {
      const label = `${entry.scenario} · ${entry.variant} · ${entry.provider}`
      if (label !== previous) lines.push(clip(label, 100))
      previous = label
      lines.push(body[index] ?? '')
    }
  }
  for (const entry of report.comparisons) {
    const label = `${entry.loop} on ${entry.scenario}/${entry.variant}/${entry.provider}`
    if (entry.firstRefusal !== undefined) lines.push(clip(`refused (${label}): ${entry.firstRefusal}`, 100))
    if (entry.droppedBreakpointRequests > 0)
      lines.push(
        clip(
          `dropped (${label}): ${entry.maxBreakpoints} of ${entry.maxBreakpointsRequested ?? '?'} cache marks sent, ${countText(entry.droppedBreakpointRequests)} ${entry.droppedBreakpointRequests === 1 ? 'request' : 'requests'}`,
          100,
        ),
      )
    if (entry.firstMisread !== undefined) lines.push(clip(`misread (${label}): ${entry.firstMisread}`, 100))
  }
  for (const library of report.absent)
    lines.push(clip(`absent (skipped; install command on stderr): ${library.name}: ${library.reason}`, 100))
  if (report.comparisons.length > 0)
    lines.push(
      'warm hit: cache read / input tokens of the requests after the first; bp: most breakpoints one',
      'request sent (/ most the loop asked for, when the library dropped some); vs ref $: cost minus',
      'the sdk reference loop on the same session.',
    )
  return lines
}
