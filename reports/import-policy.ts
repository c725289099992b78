// `cachelab import --policy consolidate|keep-live`'s results: the files it writes (policy.csv per session,
// policy-steps.csv per request) and what the terminal shows. The flag itself is bin/import-policy-option.ts's,
// so that an import without it loads neither this file nor the re-derivation (series-policy.ts): import-extras.ts
// loads both only for the flag.

import { stringify } from 'csv-stringify/sync'
import {
  POLICY_COLUMNS,
  POLICY_STEP_COLUMNS,
  type PolicySession,
  type PolicyTally,
  policyRecords,
  policyStepRecords,
} from './series-policy.ts'
import { alignedTable, countText, dollarText, signedDollarText } from './text-table.ts'

/** policy.csv and policy-steps.csv, by name, for the import's folder write. */
export function policyFiles(tally: PolicyTally): Record<'policy.csv' | 'policy-steps.csv', string> {
  return {
    'policy.csv': stringify([[...POLICY_COLUMNS], ...policyRecords(tally.result(), tally.policy)]),
    'policy-steps.csv': stringify([[...POLICY_STEP_COLUMNS], ...policyStepRecords(tally.stepsResult())]),
  }
}

/** A signed token difference with separators. */
const signedCount = (value: number) => (value > 0 ? `+${countText(value)}` : countText(value))

/** Left-out requests the terminal names per session (policy.csv counts all). */
const LISTED = 3

/** The re-derivation as the terminal shows it: per session, the replays side by side, then what was left out. */
export function policyText(tally: PolicyTally): string[] {
  const policy = tally.policy
  const sessions = tally.result()
  const derived = sessions.filter((session) => session.requests > 0)
  const total = (pick: (session: PolicySession) => number) =>
    derived.reduce((sum, session) => sum + pick(session), 0)
  const lines: string[] = []
  if (derived.length > 0)
    lines.push(
      `the DSH sessions re-derived under ${policy} (the recorded requests and the re-derived ones, each replayed on the DeepSeek simulator):`,
      alignedTable(
        [
          { title: 'session', align: 'left' },
          { title: 'recorded as', align: 'left' },
          { title: 'requests', align: 'right' },
          { title: 'first difference', align: 'left' },
          { title: 'read', align: 'right' },
          { title: 'cost', align: 'right' },
          { title: `read ${policy}`, align: 'right' },
          { title: `cost ${policy}`, align: 'right' },
          { title: 'read change', align: 'right' },
          { title: 'cost change', align: 'right' },
        ],
        [
          ...derived.map((session) => [
            `${session.format} · ${session.session}`,
            session.recordedPolicy,
            String(session.requests),
            session.firstDifference === undefined
              ? 'none'
              : `turn ${session.firstDifference.turn} step ${session.firstDifference.step} ${session.firstDifference.node}`,
            countText(session.replayed.read),
            dollarText(session.replayed.costUsd),
            countText(session.rederived.read),
            dollarText(session.rederived.costUsd),
            signedCount(session.rederived.read - session.replayed.read),
            signedDollarText(session.rederived.costUsd - session.replayed.costUsd),
          ]),
          [
            'all',
            '',
            String(total((session) => session.requests)),
            '',
            countText(total((session) => session.replayed.read)),
            dollarText(total((session) => session.replayed.costUsd)),
            countText(total((session) => session.rederived.read)),
            dollarText(total((session) => session.rederived.costUsd)),
            signedCount(total((session) => session.rederived.read - session.replayed.read)),
            signedDollarText(total((session) => session.rederived.costUsd - session.replayed.costUsd)),
          ],
        ],
      ),
    )
  const rejected = sessions.reduce((sum, session) => sum + session.rejected, 0)
  if (rejected > 0) lines.push(`${rejected} requests refused by the simulator (left out)`)
  lines.push(...notApplicableText(sessions))
  const recordedAs = new Map<string, number>()
  for (const session of derived)
    recordedAs.set(session.recordedPolicy, (recordedAs.get(session.recordedPolicy) ?? 0) + 1)
  const left = sessions.length - derived.length
  if (derived.length === 0) {
    lines.push(`--policy ${policy}: no DSH session re-derived; ${left} not applicable`)
    return lines
  }
  const read = total((session) => session.replayed.read)
  const readAs = total((session) => session.rederived.read)
  const cost = total((session) => session.replayed.costUsd)
  const costAs = total((session) => session.rederived.costUsd)
  lines.push(
    `--policy ${policy}: ${derived.length} DSH session${derived.length === 1 ? '' : 's'} re-derived${
      recordedAs.size > 0
        ? ` (recorded as ${[...recordedAs].map(([name, count]) => `${name} ${count}`).join(', ')})`
        : ''
    }; cache read ${countText(read)} → ${countText(readAs)} (${signedCount(readAs - read)}), cost ${dollarText(cost)} → ${dollarText(costAs)} (${signedDollarText(costAs - cost)}); ${left} not applicable`,
  )
  return lines
}

/** Sessions and requests left out, with why: DSH sessions by name, other formats counted. */
function notApplicableText(sessions: readonly PolicySession[]): string[] {
  const lines: string[] = []
  const otherFormats = new Map<string, number>()
  for (const session of sessions) {
    if (session.notApplicable.length === 0) continue
    if (session.format !== 'dsh') {
      otherFormats.set(session.format, (otherFormats.get(session.format) ?? 0) + 1)
      continue
    }
    const byReason = new Map<string, string[]>()
    for (const entry of session.notApplicable)
      byReason.set(entry.reason, [...(byReason.get(entry.reason) ?? []), entry.source])
    for (const [reason, sources] of byReason)
      lines.push(
        `  dsh · ${session.session}: ${session.requests === 0 ? 'not applicable' : `${sources.length} requests left out`}, ${reason}: ${sources
          .slice(0, LISTED)
          .join(', ')}${sources.length > LISTED ? ', …' : ''}`,
      )
  }
  for (const [format, count] of otherFormats)
    lines.push(`  ${format}: ${count} session${count === 1 ? '' : 's'}, not DSH logs`)
  return lines.length > 0 ? ['not re-derived (every one in policy.csv):', ...lines] : []
}
