// Cline's CLI (notes/2026-12-08-cline.md): the AI SDK's user-agent, no session id on the wire, so it is
// told by its tools (`read_files`, `ask_question`, `spawn_agent`: names no other agent here declares). Its
// own turns open with its system prompt; a subagent started by `spawn_agent` sends the system prompt the
// tool call gave it, with Cline's tools.

import { systemText } from '../../../../providers/wire/wire-text.ts'
import { toolNames } from '../../../gateway-changes.ts'
import type { AgentPort, AgentReading, WireRequest } from './types.ts'

const MAIN = 'You are Cline, an AI coding agent'

/** Tools every Cline agent, lead or subagent, declares. */
const CLINE_TOOLS = ['read_files', 'ask_question', 'spawn_agent']

export const cline: AgentPort = {
  name: 'cline',
  read(request: WireRequest): AgentReading | undefined {
    const tools = new Set(toolNames(request.body))
    if (!CLINE_TOOLS.every((name) => tools.has(name))) return undefined
    const main = systemText(request.api, request.body).trimStart().startsWith(MAIN)
    return { agent: 'cline', kind: main ? 'main' : 'subagent' }
  },
}
