// What a port for one coding agent knows about its traffic: whether a request is the agent's, its
// version, the agent's own session id, and the kind of conversation the request belongs to where the
// wire says so. Each agent is one file in this folder; the conversation tracker asks them in turn.

import type { WireApi } from '../../../../providers/types.ts'
import type { ConversationKind } from '../../../../providers/wire/exchange.ts'

/** A request as the conversation tracker sees it. */
export interface WireRequest {
  api: WireApi
  body: Record<string, unknown>
  /** The request's headers the capture reads (`WIRE_HEADERS`), lower-case names; never a credential. */
  headers: Readonly<Record<string, string>>
}

/** What an agent's port reads off one of its requests. */
export interface AgentReading {
  /** The agent, as `cachelab run --agent` names it (`claude-code`). */
  agent: string
  /** Its version, where the request says (`user-agent` and the like). */
  version?: string
  /**
   * The agent's own session id, where the wire carries one: the name of the session and of its main
   * conversation, the same the agent's transcript uses. Never a device, account or user id.
   */
  session?: string
  /** The kind of conversation, where the wire says. */
  kind?: ConversationKind
  /**
   * The agent's own id of the conversation within its session (a subagent's id), where the wire carries
   * one: requests with the same key are one conversation, whatever they send.
   */
  key?: string
  /** What a side or compaction request is for (`title`, `router`, `memory`, `summary`), in its name. */
  purpose?: string
}

/** The port of one agent. */
export interface AgentPort {
  /** The agent, as `cachelab run --agent` names it. */
  name: string
  /** The reading of a request, or undefined when the request is not this agent's. */
  read(request: WireRequest): AgentReading | undefined
}
