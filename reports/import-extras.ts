// What `--as` and `--policy` add to an import (the counterfactual replay, the series-start re-derivation),
// and the simulator's prediction of requests that carry their body: each loads its modules (the simulators,
// their tokenizer, the mock providers' usage) only when it is used, so an import of Claude Code files,
// which needs none of them, starts without them (notes/2026-12-02-import-speed-2.md).

import type { SeriesStartPolicy } from '../harness/policies.ts'
import type { AsProviderTarget } from './as-provider.ts'
import type { ImportOptions } from './import.ts'
import { counterfactualText } from './import-output.ts'
import type { Prediction } from './observed/transcripts/replay.ts'
import type { ObservedRequest } from './observed/transcripts/types.ts'

/**
 * The simulator's prediction (replay.ts's `predictObserved`), and what changed at the requests whose rows
 * name a break (`breaks`), loaded once a file has requests with their body.
 */
export async function predictLazily(
  requests: readonly ObservedRequest[],
  breaks?: ReadonlySet<ObservedRequest>,
): Promise<Map<ObservedRequest, Prediction>> {
  if (requests.length === 0) return new Map()
  const { predictObserved } = await import('./observed/transcripts/replay.ts')
  return predictObserved(requests, breaks)
}

/** The files and terminal lines `--as` and `--policy` add, from what they were told file by file. */
export interface ImportExtras {
  /** Told of each file's requests and rows; undefined when neither flag is given. */
  afterFile: ImportOptions['afterFile']
  /** The files to write beside the run's (counterfactual.csv, not-rebuildable.csv, policy.csv, …). */
  files(): Record<string, string>
  /** What the terminal shows of them, each block followed by an empty line. */
  text(): string[]
}

/** The extras of an import with `--as TARGET` and `--policy POLICY` (either may be absent). */
export async function importExtras(
  target: AsProviderTarget | undefined,
  policy: SeriesStartPolicy | undefined,
): Promise<ImportExtras> {
  const [asProvider, seriesPolicy, policyReport] = await Promise.all([
    target === undefined ? undefined : import('./as-provider.ts'),
    policy === undefined ? undefined : import('./series-policy.ts'),
    policy === undefined ? undefined : import('./import-policy.ts'),
  ])
  const tally =
    asProvider === undefined || target === undefined ? undefined : new asProvider.CounterfactualTally(target)
  const policyTally =
    seriesPolicy === undefined || policy === undefined ? undefined : new seriesPolicy.PolicyTally(policy)
  const hooks = [tally, policyTally].flatMap((hook) => (hook === undefined ? [] : [hook.add.bind(hook)]))
  return {
    afterFile:
      hooks.length === 0
        ? undefined
        : (requests, entries) => {
            for (const add of hooks) add(requests, entries)
          },
    files() {
      const files: Record<string, string> = {}
      if (policyTally !== undefined && policyReport !== undefined)
        Object.assign(files, policyReport.policyFiles(policyTally))
      if (tally !== undefined && target !== undefined && asProvider !== undefined)
        Object.assign(files, asProvider.counterfactualFiles(tally.result(), target))
      return files
    },
    text() {
      const lines: string[] = []
      if (tally !== undefined && target !== undefined)
        lines.push(...counterfactualText(tally.result(), target), '')
      if (policyTally !== undefined && policyReport !== undefined)
        lines.push(...policyReport.policyText(policyTally), '')
      return lines
    },
  }
}
