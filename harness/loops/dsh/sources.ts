// Which DSH session event produced each message of a DeepSeek wire request: the system slot comes from the
// folded request header, every other message from a surface node. Pure: the surface, the events and DSH's
// own per-node projection in, one seq per wire message out.

/** The part of a DSH session event this module reads. */
export interface DshEventView {
  type: string
  seq: number
  data: unknown
  surfaceOp?: unknown
}

/** A message as DSH derives it: its role and content blocks. */
export interface DshMessageView {
  role: string
  content: ReadonlyArray<{ type: string }>
}

/**
 * How many wire messages DSH's DeepSeek serializer makes of one derived message: an assistant message is
 * one; a user message is one `tool` message per tool result, plus one `user` message for whatever else it
 * carries (text, images), and at least one.
 */
export function wireMessageCount(message: DshMessageView): number {
  if (message.role !== 'user') return 1
  const results = message.content.filter((block) => block.type === 'tool-result').length
  const other = message.content.length - results
  return Math.max(1, results + (other > 0 ? 1 : 0))
}

/**
 * The DSH event seq behind each wire message, in wire order: the latest `request/header` for the system
 * message (when the header carries a system prompt), then each projected surface node once per wire
 * message it expands to. Nodes that project to nothing (an empty assistant message) are skipped, as
 * DSH's derivation skips them.
 */
export function wireSources(
  events: readonly DshEventView[],
  surface: readonly number[],
  project: (event: DshEventView) => DshMessageView | null,
): number[] {
  const sources: number[] = []
  const header = latestHeader(events)
  if (header !== undefined && headerSystem(header) !== '') sources.push(header.seq)
  for (const seq of surface) {
    const event = events[seq]
    if (event === undefined) continue
    const message = project(event)
    if (message === null) continue
    for (let index = 0; index < wireMessageCount(message); index += 1) sources.push(seq)
  }
  return sources
}

/** The latest `request/header` event of a log. */
export function latestHeader(events: readonly DshEventView[]): DshEventView | undefined {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]
    if (event?.type === 'request/header') return event
  }
  return undefined
}

/** The system prompt a `request/header` event carries (DSH 0.1.0: the header owns the prompt). */
function headerSystem(event: DshEventView): string {
  const header = (event.data as { header?: { system?: unknown } } | null)?.header
  return typeof header?.system === 'string' ? header.system : ''
}
