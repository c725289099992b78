// What a request shows beside its messages that tells one conversation from another: the system prompt
// and the tools it declares (as hashes), and whether it asks for structured output. Two requests of one
// conversation share most of this; a title, a router or a subagent sent in the same session rarely does.

import { asRecord } from '../../../harness/json-fields.ts'
import type { WireApi } from '../../../providers/types.ts'
import { canonicalJson, contentHash, type ItemDigest } from '../../../providers/wire/digest.ts'
import { jsonOutputOf } from '../../../providers/wire/wire-text.ts'

type Body = Record<string, unknown>

/** The shape of one request, beside its conversation items. */
export interface RequestShape {
  /** Hash of the system prompt (top-level system, instructions, system and developer messages); '' when none. */
  system: string
  /** Hash of the declared tools; '' when the request declares none. */
  tools: string
  /** Whether the answer must be JSON (a response schema or a JSON mode). */
  structured: boolean
}

/** The tools a body declares, in its API's field. */
function toolsOf(api: WireApi, body: Body): unknown {
  if (api === 'bedrock-converse') return asRecord(body.toolConfig).tools
  return body.tools
}

/** The system prompt of a body outside its message list. */
function systemOf(api: WireApi, body: Body): unknown {
  switch (api) {
    case 'openai-responses':
      return body.instructions
    case 'gemini-generate':
      return body.systemInstruction
    default:
      return body.system
  }
}

/** The shape of a body whose message list digested to `items`. */
export function shapeOf(api: WireApi, body: Body, items: readonly ItemDigest[]): RequestShape {
  const inline = items.filter((item) => item.role === 'system' || item.role === 'developer')
  const outside = systemOf(api, body)
  const system =
    outside === undefined && inline.length === 0
      ? ''
      : contentHash(
          `${outside === undefined ? '' : canonicalJson(outside)}|${inline.map((item) => item.hash).join(',')}`,
        )
  const tools = toolsOf(api, body)
  return {
    system,
    tools: Array.isArray(tools) && tools.length > 0 ? contentHash(canonicalJson(tools)) : '',
    structured: jsonOutputOf(api, body) !== undefined,
  }
}
