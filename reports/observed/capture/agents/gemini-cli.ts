// Gemini CLI on `generateContent` (notes/2026-12-01-conversations.md): `user-agent: GeminiCLI[-tui]/<version>/<model> …`;
// no session id on the wire, so its conversations are told apart by continuation alone. The router
// (a classifier request before each turn on "auto") and the next-speaker check ask for JSON; they are
// side requests.

import { lastItemText, systemText } from '../../../../providers/wire/wire-text.ts'
import type { AgentPort, AgentReading, WireRequest } from './types.ts'

const USER_AGENT = /^GeminiCLI(?:-[a-z]+)?\/([0-9][^/\s]*)/

/** What a Gemini CLI request that is not a main turn's is for, if it is one. */
function purposeOf(request: WireRequest): string | undefined {
  const system = systemText(request.api, request.body).trimStart()
  if (system.startsWith('You are a specialized Task Routing AI')) return 'router'
  if (
    lastItemText(request.body)
      .trimStart()
      .startsWith('Analyze *only* the content and structure of your immediately preceding response')
  )
    return 'next-speaker'
  const config = request.body.generationConfig as { responseMimeType?: unknown } | undefined
  return config?.responseMimeType === 'application/json' ? 'structured' : undefined
}

export const geminiCli: AgentPort = {
  name: 'gemini-cli',
  read(request: WireRequest): AgentReading | undefined {
    if (request.api !== 'gemini-generate') return undefined
    const agent = USER_AGENT.exec(request.headers['user-agent'] ?? '')
    if (agent === null) return undefined
    const purpose = purposeOf(request)
    return {
      agent: 'gemini-cli',
      ...(agent[1] !== undefined ? { version: agent[1] } : {}),
      ...(purpose !== undefined ? { kind: 'side' as const, purpose } : { kind: 'main' as const }),
    }
  },
}
