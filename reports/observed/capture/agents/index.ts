// The coding agents whose traffic the capture recognizes, one port per file; the first whose reading
// holds names the agent of a request.

import { claudeCode } from './claude-code.ts'
import { cline } from './cline.ts'
import { codex } from './codex.ts'
import { copilot } from './copilot.ts'
import { geminiCli } from './gemini-cli.ts'
import { kilo } from './kilo.ts'
import { opencode } from './opencode.ts'
import { pi } from './pi.ts'
import { qwenCode } from './qwen-code.ts'
import type { AgentPort, AgentReading, WireRequest } from './types.ts'

export type { AgentPort, AgentReading, WireRequest } from './types.ts'

/** Every agent port, in the order they are asked. */
export const AGENT_PORTS: readonly AgentPort[] = [
  claudeCode,
  codex,
  opencode,
  kilo,
  geminiCli,
  qwenCode,
  pi,
  copilot,
  cline,
]

/** What the first agent port that recognizes a request reads off it. */
export function readAgent(request: WireRequest): AgentReading | undefined {
  for (const port of AGENT_PORTS) {
    const reading = port.read(request)
    if (reading !== undefined) return reading
  }
  return undefined
}
