// Client libraries as loops: a minimal agent loop written on each library (the Vercel AI SDK, LangChain
// JS, pi-ai, the OpenAI Agents SDK) and on the official SDKs as the reference, each caching the way its
// own documentation recommends. The runner (scenarios/run-library.ts) owns the script, the clock and the
// scripted answers; a loop owns only what its library decides: how the history, the system prompt, the
// tools and the cache hints become a request, and how it reads back the usage.

import type { JsonObject, ProviderId, ToolSchema } from '../../types.ts'

/** The client-library loops `cachelab run --loop` knows; `sdk` (the official SDKs) is the reference. */
export const LIBRARY_LOOP_NAMES = ['sdk', 'ai-sdk', 'langchain', 'pi-ai', 'openai-agents'] as const

export type LibraryLoopName = (typeof LIBRARY_LOOP_NAMES)[number]

/** The loop every other library's requests are compared with. */
export const REFERENCE_LOOP: LibraryLoopName = 'sdk'

/** A tool call the model made, as the library hands it to the loop. */
export interface LibraryToolCall {
  /** The call id the library read off the wire. */
  id: string
  name: string
  arguments: JsonObject
}

/** What the tool returns: the scenario's scripted result. */
export interface LibraryToolResult {
  output: string
  isError: boolean
}

/**
 * The usage a library reports to its caller for one request, mapped onto cachelab's meanings by the
 * library's own documentation of its fields: `input` every input token, `cacheRead` and `cacheWrite` the
 * cached and cache-written parts. A field the library does not report stays undefined.
 */
export interface ReportedUsage {
  input?: number
  cacheRead?: number
  cacheWrite?: number
  /** The library's usage object as it handed it over, for the report. */
  raw: unknown
  /** What the library warned its caller about the request (the AI SDK's call warnings), as text. */
  warnings?: readonly string[]
  /**
   * The cache breakpoints the loop asked the library for on this request (the marks in its messages), when
   * it asked for any: more than the body carries means the library dropped some.
   */
  requestedBreakpoints?: number
}

/** How a loop's requests reach cachelab: the base URL of `serve` and the headers of the next request. */
export interface LibraryTransport {
  /** The base URL of the provider's vendor on the loopback server, as docs/serve.md's client table gives it. */
  baseURL: string
  apiKey: string
  /** The cachelab headers of the next request (scripted answer, virtual time, session). */
  headers(): Record<string, string>
  /** `fetch` with those headers added to every request, for libraries that accept a fetch. */
  fetch: typeof fetch
}

/** What a session starts from. */
export interface LibrarySessionOptions {
  provider: ProviderId
  model: string
  system: string
  tools: readonly ToolSchema[]
  /** Output cap of every request. */
  maxTokens: number | undefined
  /** A per-session key for providers that route by one (OpenAI's `prompt_cache_key`). */
  sessionKey: string
  transport: LibraryTransport
}

/** What one user turn did. */
export interface LibraryTurn {
  /** Per request of the turn, in order: what the library reported (undefined when it reported nothing). */
  reported: Array<ReportedUsage | undefined>
  /** The library's error when a request failed; the turn stopped there. */
  error?: string
}

/** One conversation held in the library's own message format. */
export interface LibrarySession {
  /** The system prompt from the next request on. */
  setSystem(text: string): void
  /** The tools from the next request on. */
  setTools(tools: readonly ToolSchema[]): void
  /**
   * One user turn: request, run the tools the model calls (through `execute`), request again, until the
   * model answers without a tool call or a request fails. A failed turn leaves the history as it was
   * before the turn, as a user retrying would find it.
   */
  turn(user: string, execute: (call: LibraryToolCall) => LibraryToolResult): Promise<LibraryTurn>
}

/** A library loop, loaded. */
export interface LibraryLoop {
  name: LibraryLoopName
  /** The providers the loop speaks to, through the library's own provider packages. */
  providers: readonly ProviderId[]
  /** How the loop asks for caching on a provider, in a sentence for the report (its docs' recommendation). */
  caching(provider: ProviderId): string
  open(options: LibrarySessionOptions): Promise<LibrarySession>
}

/** A library loop's module: its packages (optional peers, pinned exactly as devDependencies) and its loader. */
export interface LibraryLoopModule {
  name: LibraryLoopName
  /** The npm packages it imports; each must be installed. */
  packages: readonly string[]
  /** Imports the packages; rejects when one is missing. */
  load(): Promise<LibraryLoop>
}
