// The gate's verdict as one JSON document (`check --reporter json`, `check --json`): every judged session
// with its status and findings, each finding as the gate computed it plus the line the terminal prints.

import type { Finding, GateResult } from './gate.ts'
import { findingLines, unmatchedAdvice } from './gate-text.ts'
import { selectionText } from './plan.ts'

/** The document's `format` tag. */
export const GATE_JSON_FORMAT = 'cachelab-gate'

/** The document's version: a field removed or changed in meaning is a new version. */
export const GATE_JSON_VERSION = 1

/** What the document says besides the verdict. */
export interface GateJsonOptions {
  /** Lines check prints before the verdict (no breaks.csv in the baseline, a gateway's changes). */
  notices?: readonly string[]
}

/** A finding as the document holds it: the gate's fields, its line, and its break's change as lines. */
function findingJson(finding: Finding): Finding & { message: string; lines: string[] } {
  const [message = '', ...lines] = findingLines(finding)
  return { ...finding, message, lines }
}

/** The verdict as two-space JSON with a final newline. */
export function gateJson(result: GateResult, options: GateJsonOptions = {}): string {
  const { plan, outside } = result.scope
  const document = {
    format: GATE_JSON_FORMAT,
    version: GATE_JSON_VERSION,
    passed: result.passed,
    checked: result.checked,
    counts: {
      failures: result.failures.length,
      changes: result.changes.length,
      notes: result.notes.length,
      failingSessions: result.sessions.filter((session) => session.status === 'fails').length,
      outsidePlan: outside.length,
    },
    options: result.options,
    scope: {
      // Null without a plan: every baseline session was judged.
      plan: plan === undefined ? null : { selection: plan.selection, flags: selectionText(plan.selection) },
      outside,
    },
    sessions: result.sessions.map((session) => ({
      ...session.key,
      status: session.status,
      failures: session.failures.map(findingJson),
      changes: session.changes.map(findingJson),
      notes: session.notes.map(findingJson),
    })),
    claims: result.claims,
    unmatched: result.unmatched.map((entry) => ({ ...entry, advice: unmatchedAdvice(entry) })),
    failures: result.failures.map(findingJson),
    changes: result.changes.map(findingJson),
    notes: result.notes.map(findingJson),
    notices: options.notices ?? [],
  }
  return `${JSON.stringify(document, null, 2)}\n`
}
