// `--format auto`: which agent wrote a transcript, told from its first records. Each format has a shape
// no other shares: Codex wraps every record in `{timestamp, type, payload}`, Claude Code lines carry a
// `sessionId` (or title another session by `leafUuid`), DSH and pi open with a `session` header (DSH's
// with a numeric `createdAt`, pi's with an ISO `timestamp`) and DSH names events `area/verb`. Gemini CLI
// opens with an untyped header holding a `projectHash` and names its model's messages `gemini`; its older
// `session-*.json` is one pretty-printed object that opens with the same fields. qwen-code's records are
// Claude Code's shape with marks Claude Code never writes (`provenance`, `usageMetadata`, `systemPayload`,
// Gemini `parts` as message content). opencode's database is a SQLite file with its tables (Kilo Code's
// with `kilo_` tables beside them); its `opencode export` JSON opens `{"info": {"id": "ses_` (so does
// `kilo export`'s, which only `--format kilo` tells). Copilot CLI names its events `area.verb` (its first
// `session.start`) and wraps their fields in `data`. Factory Droid's log is text, each entry `[time] LEVEL: `;
// its session files open with a `session_start` record.
// Cline's `*.messages.json` opens `{"version": 1, "updated_at": …, "agent": …` with its `sessionId` next.

import { basename } from 'node:path'
import { isRecord } from '../../../harness/json-fields.ts'
import { headOf, isSqliteHead } from './file-head.ts'
import { JsonPicker } from './json-pick.ts'
import { readJsonRecords } from './lines.ts'
import type { TranscriptFormat } from './types.ts'

/** Records read before giving up: a transcript shows its format on its first lines. */
export const DETECT_RECORDS = 50

/** Bytes read at a time while detecting. */
const DETECT_CHUNK_BYTES = 2 ** 14

/**
 * The fields `formatOfRecord` reads (json-pick.ts): of `payload`, `data` and `message.parts` only their
 * presence and kind, so a large first record is not built to be told apart.
 */
export const DETECT_FIELDS = new JsonPicker({
  fields: {
    type: 'whole',
    sessionId: 'whole',
    projectHash: 'whole',
    id: 'whole',
    createdAt: 'whole',
    timestamp: 'whole',
    leafUuid: 'whole',
    provenance: 'whole',
    payload: { fields: {} },
    data: { fields: {} },
    usageMetadata: { fields: {} },
    systemPayload: { fields: {} },
    message: { fields: { parts: { each: { fields: {} } } } },
  },
})

const CODEX_TYPES = new Set(['session_meta', 'turn_context', 'response_item', 'event_msg', 'compacted'])
const CLAUDE_CODE_TYPES = new Set([
  'user',
  'assistant',
  'system',
  'summary',
  'attachment',
  'progress',
  'queue-operation',
  'permission-mode',
  'last-prompt',
  'file-history-snapshot',
])
const PI_TYPES = new Set([
  'message',
  'model_change',
  'thinking_level_change',
  'compaction',
  'branch_summary',
  'custom',
  'custom_message',
  'label',
  'session_info',
])

/** A Copilot CLI event's type: `session.start`, `assistant.turn_start`, `tool.execution_complete`. */
const COPILOT_TYPE = /^[a-z]+\.[a-z_]+$/

/** Whether a session record carries what only qwen-code writes. */
function isQwenCodeRecord(value: Record<string, unknown>): boolean {
  const message = isRecord(value.message) ? value.message : {}
  return (
    typeof value.provenance === 'string' ||
    'usageMetadata' in value ||
    'systemPayload' in value ||
    Array.isArray(message.parts)
  )
}

/** How an `opencode export` prints a session: its info first, its id first in that. */
const OPENCODE_EXPORT = /^\s*\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"ses_/

/** How every entry of Factory Droid's log begins: `[ISO time] LEVEL: `. */
export const DROID_LOG_ENTRY = /^\[(\d{4}-\d\d-\d\dT[\d:.]+Z)\] [A-Z]+: /

/**
 * Factory Droid's log: plain text, each entry `[ISO time] LEVEL: …`, in a file Droid names `droid-log-*.log`
 * (or, under another name, with Droid's own tags on its first entries).
 */
function isDroidLog(file: string, head: Buffer): boolean {
  const text = head.toString('utf8')
  if (!DROID_LOG_ENTRY.test(text)) return false
  return /^droid-log.*\.log$/.test(basename(file)) || text.includes('"droidMode"')
}

/** The format one record shows, or undefined when the record alone does not tell. */
export function formatOfRecord(value: Record<string, unknown>): TranscriptFormat | undefined {
  const type = value.type
  if (type === undefined && typeof value.sessionId === 'string' && typeof value.projectHash === 'string')
    return 'gemini-cli'
  if (typeof type !== 'string') return undefined
  if (type === 'gemini' && typeof value.id === 'string' && !('sessionId' in value)) return 'gemini-cli'
  // A Factory Droid session file (its usage is in Droid's log: droid.ts).
  if (type === 'session_start' && typeof value.id === 'string') return 'droid'
  if (type === 'session') {
    if (typeof value.createdAt === 'number') return 'dsh'
    if (typeof value.timestamp === 'string') return 'pi'
    return undefined
  }
  if (CODEX_TYPES.has(type) && isRecord(value.payload)) return 'codex'
  if (type.includes('/') && 'data' in value) return 'dsh'
  if (COPILOT_TYPE.test(type) && isRecord(value.data) && typeof value.id === 'string') return 'copilot'
  if (typeof value.sessionId === 'string' && isQwenCodeRecord(value)) return 'qwen-code'
  if (
    CLAUDE_CODE_TYPES.has(type) &&
    (typeof value.sessionId === 'string' || typeof value.leafUuid === 'string')
  )
    return 'claude-code'
  if (PI_TYPES.has(type) && typeof value.timestamp === 'string' && !('payload' in value)) return 'pi'
  return undefined
}

/**
 * The format of a transcript file from its first records (corrupt lines are passed over), or undefined
 * when none of them tells. Reads no further than it must.
 */
export async function detectFormat(file: string): Promise<TranscriptFormat | undefined> {
  const head = headOf(file)
  // Only a SQLite file loads the database reader (and asks for its library).
  if (isSqliteHead(head)) return (await import('./opencode-database.ts')).opencodeDatabaseFormat(file)
  if (OPENCODE_EXPORT.test(head.toString('utf8'))) return 'opencode'
  if (isDroidLog(file, head)) return 'droid'
  if (file.endsWith('.json')) return jsonFormat(file)
  let examined = 0
  // The first records tell: read a little at a time, not the 1 MiB a whole file's reading takes.
  for await (const record of readJsonRecords(
    file,
    { lenient: true, onProblem: () => {} },
    { chunkBytes: DETECT_CHUNK_BYTES, pick: DETECT_FIELDS },
  )) {
    const format = formatOfRecord(record.value)
    if (format !== undefined) return format
    examined += 1
    if (examined >= DETECT_RECORDS) return undefined
  }
  return undefined
}

/** Bytes of a `.json` file read to tell an older Gemini CLI session: its header fields come first. */
const JSON_HEAD = 4096

/** How Cline writes a session's messages: its format version, when it was written, then which agent's. */
const CLINE_MESSAGES = /^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"updated_at"\s*:\s*"[^"]*"\s*,\s*"agent"\s*:/

/**
 * The format of a `.json` file, one object: `gemini-cli` for an older Gemini CLI's `session-*.json`
 * (opening with its session id), `cline` for a Cline session's `*.messages.json`.
 */
function jsonFormat(file: string): TranscriptFormat | undefined {
  const head = headOf(file, JSON_HEAD).toString('utf8')
  if (/^\s*\{\s*"sessionId"\s*:/.test(head) && head.includes('"projectHash"')) return 'gemini-cli'
  if (CLINE_MESSAGES.test(head) && head.includes('"sessionId"')) return 'cline'
  return undefined
}
