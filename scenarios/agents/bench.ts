// The agents tests' bench: agent sessions against one loopback serve (session.ts), and `cachelab import`
// of what the agents wrote down, to compare with the capture.

import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { AgentPlace } from '../../harness/loops/agents/index.ts'
import { parseStepsCsv } from '../../reports/parse.ts'
import type { StepRow } from '../../reports/types.ts'

export {
  AGENT_VERSIONS_VARIABLE,
  type AgentBench,
  type AgentSession,
  agentVersion,
  type SessionOptions,
  STEP_TIMEOUT_MS,
  startAgentBench,
} from './session.ts'

const execFileAsync = promisify(execFile)

/** What `cachelab import` made of an agent's own session files. */
export interface Imported {
  rows: StepRow[]
  /** What it printed on stdout and stderr. */
  stdout: string
  stderr: string
}

/**
 * `cachelab import` as a user runs it: with no path, in the session's home (none of the agents' location
 * variables set), so it finds the agent's folders on its own; or of the paths given.
 */
export async function importAgentSession(place: AgentPlace, args: readonly string[] = []): Promise<Imported> {
  const out = mkdtempSync(join(tmpdir(), 'cachelab-agents-import-'))
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      [join(process.cwd(), 'bin', 'cachelab.js'), 'import', ...args, '--out', out],
      {
        env: { PATH: process.env.PATH ?? '', HOME: place.home, NO_COLOR: '1' },
        maxBuffer: 64 * 1024 * 1024,
      },
    )
    const rows = parseStepsCsv(readFileSync(join(out, 'steps.csv'), 'utf8'), 'steps.csv')
    return { rows, stdout, stderr }
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

/**
 * Each conversation's requests as `model input/read/write/output`, in order: what an import of the
 * agent's transcript must give exactly as the capture of the same session did.
 */
export function usageByConversation(rows: readonly StepRow[]): Record<string, string[]> {
  const found: Record<string, string[]> = {}
  for (const row of rows) {
    if (!row.ok) continue
    const list = found[row.variant] ?? []
    list.push(
      `${row.model} ${row.inputTokens}/${row.cacheReadTokens}/${row.cacheWriteTokens}/${row.outputTokens}`,
    )
    found[row.variant] = list
  }
  return found
}

/**
 * Each conversation's breaks as `#n cause@node lost` (its n-th successful request), in order: what an import
 * must name as the capture did, request for request (a transcript that lacks a request is listed by the
 * import, not here). By position, not turn and step: a transcript numbers a request resent after a
 * compaction as the turn's next step, the wire as the turn's first again.
 * `withLost: false` leaves the lost tokens out, for a provider whose import estimates them (below);
 * `withNode: false` the node, which a transcript that records a compaction but not the request cannot know.
 */
export function breaksByConversation(
  rows: readonly StepRow[],
  { withLost = true, withNode = true }: { withLost?: boolean; withNode?: boolean } = {},
): Record<string, string[]> {
  const found: Record<string, string[]> = {}
  const requests = new Map<string, number>()
  for (const row of rows) {
    if (!row.ok) continue
    const index = (requests.get(row.variant) ?? 0) + 1
    requests.set(row.variant, index)
    if (row.breakCause === undefined) continue
    const list = found[row.variant] ?? []
    const lost = withLost ? ` ${row.lostTokens}` : ''
    const node = withNode ? `@${row.breakNode ?? ''}` : ''
    list.push(`#${index} ${row.breakCause}${node}${lost}`)
    found[row.variant] = list
  }
  return found
}

/**
 * The lost tokens of each break of a conversation, in order. An import reads what the previous request left
 * cached off its usage alone: the whole input on Gemini's implicit cache, where the simulator leaves the
 * few framing tokens no request can read (the next request reads 3 tokens less than the previous input).
 */
export function lostByBreak(rows: readonly StepRow[], conversation: string): number[] {
  return rows
    .filter((row) => row.ok && row.variant === conversation && row.breakCause !== undefined)
    .map((row) => row.lostTokens)
}
