// What a run set out to do, kept in its folder as plan.json: how its sessions were chosen and which
// sessions that gave. The gate judges a run on what it planned (a one-scenario run on that scenario), so
// "missing" means planned and absent (notes/2026-12-07-gate-scope-and-reporters.md).

import { CachelabError } from '../harness/errors.ts'
import type { LoopName } from '../harness/loops/types.ts'
import type { ProviderId } from '../harness/types.ts'
import { type SessionKey, sessionKeyString } from './session-key.ts'

/** The plan's file name, in the run folder. */
export const PLAN_FILE = 'plan.json'

/** The plan's `format` tag. */
export const PLAN_FORMAT = 'cachelab-plan'

/** The plan's version. */
export const PLAN_VERSION = 1

/** A dimension of the selection: every name the run knew (`all`), or the names it was narrowed to. */
export type Selected = 'all' | string[]

/** How a run chose its sessions: what its flags (or the library's options) narrowed, and its loops. */
export interface PlanSelection {
  scenarios: Selected
  variants: Selected
  providers: Selected
  /** The agent loops each session was driven through (`model` unless `--loop` said otherwise). */
  loops: LoopName[]
}

/** A session the selection covers that the run left out, and why. */
export interface LeftOut {
  scenario: string
  variant: string
  provider: ProviderId
  /** One sentence: what the variant needs that the model lacks. */
  reason: string
}

/** What a run planned. */
export interface RunPlan {
  selection: PlanSelection
  /** Every session the run set out to produce (one per loop that drives it), in plan order. */
  sessions: SessionKey[]
  /** Sessions the selection covers that the run did not plan (a variant the model cannot serve). */
  leftOut: LeftOut[]
}

/** A plan as written: two-space JSON with a final newline, tagged with its format and version. */
export function planText(plan: RunPlan): string {
  return `${JSON.stringify({ format: PLAN_FORMAT, version: PLAN_VERSION, ...plan }, null, 2)}\n`
}

/** Parse plan.json's text; anything that is not a plan is an input error naming the file. */
export function parsePlan(text: string, where: string): RunPlan {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new CachelabError('input', `${where} is not JSON: the run's plan cannot be read`)
  }
  const record = isRecord(value) ? value : {}
  const selection = isRecord(record.selection) ? record.selection : undefined
  const problem =
    record.format !== PLAN_FORMAT
      ? `format must be ${JSON.stringify(PLAN_FORMAT)}`
      : record.version !== PLAN_VERSION
        ? `version must be ${PLAN_VERSION}`
        : selection === undefined
          ? 'selection must be an object'
          : !(['scenarios', 'variants', 'providers'] as const).every((name) => isSelected(selection[name]))
            ? 'selection.scenarios, .variants and .providers must each be "all" or a list of names'
            : !isStrings(selection.loops)
              ? 'selection.loops must be a list of loop names'
              : !Array.isArray(record.sessions) || !record.sessions.every(isKey)
                ? 'sessions must be a list of {scenario, variant, provider}'
                : !Array.isArray(record.leftOut) || !record.leftOut.every(isLeftOut)
                  ? 'leftOut must be a list of {scenario, variant, provider, reason}'
                  : undefined
  if (problem !== undefined) throw new CachelabError('input', `${where}: ${problem}`)
  return {
    selection: {
      scenarios: selection?.scenarios as Selected,
      variants: selection?.variants as Selected,
      providers: selection?.providers as Selected,
      loops: selection?.loops as LoopName[],
    },
    sessions: (record.sessions as SessionKey[]).map((key) => ({
      scenario: key.scenario,
      variant: key.variant,
      provider: key.provider,
      ...(key.loop !== undefined ? { loop: key.loop } : {}),
    })),
    leftOut: record.leftOut as LeftOut[],
  }
}

/** Where a baseline session stands against a run's plan. */
export type PlanStanding =
  /** The run set out to produce it: judged, and missing when absent. */
  | { kind: 'planned' }
  /** The run's selection covers it, yet the run did not plan it: why, when the plan says. */
  | { kind: 'not-planned'; reason: string | undefined }
  /** The run's selection leaves it out (`--scenario`, `--provider`, `--variant`, `--loop`): not judged. */
  | { kind: 'outside' }

/** Where the session stands against the plan. */
export function standing(plan: RunPlan, key: SessionKey): PlanStanding {
  const id = sessionKeyString(key)
  if (plan.sessions.some((session) => sessionKeyString(session) === id)) return { kind: 'planned' }
  const { selection } = plan
  const covers = (selected: Selected, name: string) => selected === 'all' || selected.includes(name)
  if (
    !covers(selection.scenarios, key.scenario) ||
    !covers(selection.variants, key.variant) ||
    !covers(selection.providers, key.provider) ||
    !selection.loops.includes(key.loop ?? 'model')
  )
    return { kind: 'outside' }
  const left = plan.leftOut.find(
    (entry) =>
      entry.scenario === key.scenario && entry.variant === key.variant && entry.provider === key.provider,
  )
  return { kind: 'not-planned', reason: left?.reason }
}

/** The selection as the flags that narrowed it: `--scenario prompt-change --provider anthropic`. */
export function selectionText(selection: PlanSelection): string {
  const narrowed = [
    ['--scenario', selection.scenarios],
    ['--variant', selection.variants],
    ['--provider', selection.providers],
  ] as const
  const flags = narrowed.flatMap(([flag, selected]) =>
    selected === 'all' ? [] : [`${flag} ${selected.join(',')}`],
  )
  if (selection.loops.length !== 1 || selection.loops[0] !== 'model')
    flags.push(`--loop ${selection.loops.join(',')}`)
  return flags.join(' ')
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const isStrings = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((entry) => typeof entry === 'string')

const isSelected = (value: unknown): boolean => value === 'all' || isStrings(value)

function isKey(value: unknown): boolean {
  return (
    isRecord(value) &&
    typeof value.scenario === 'string' &&
    typeof value.variant === 'string' &&
    typeof value.provider === 'string' &&
    (value.loop === undefined || typeof value.loop === 'string')
  )
}

const isLeftOut = (value: unknown): boolean =>
  isKey(value) && isRecord(value) && typeof value.reason === 'string'
