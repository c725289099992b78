// The coding agents cachelab drives headless, by name.

import { claudeCode } from './claude-code.ts'
import { cline } from './cline.ts'
import { codex } from './codex.ts'
import { copilot } from './copilot.ts'
import { geminiCli } from './gemini-cli.ts'
import { kilo } from './kilo.ts'
import { opencode } from './opencode.ts'
import { pi } from './pi.ts'
import { qwenCode } from './qwen-code.ts'
import type { AgentDriver, AgentName } from './types.ts'

export { agentsCache, installedAgent, installFolder, LATEST, latestVersion } from './install.ts'
export { cachelabMcpServer, MCP_SERVER_NAME, MCP_SERVER_SCRIPT, MCP_TOOL_NAME } from './mcp.ts'
export { runAgentStep, type StepOutcome, writeAgentFiles } from './process.ts'
export { type AgentTerminal, startTerminal, terminalText } from './terminal.ts'
export type {
  AgentCapabilities,
  AgentCommand,
  AgentDriver,
  AgentName,
  AgentOptions,
  AgentPlace,
  AgentStep,
  McpServer,
  ServerUrls,
  Unsupported,
} from './types.ts'
export { AGENT_NAMES, PLACEHOLDER_KEY } from './types.ts'

export const AGENT_DRIVERS: Readonly<Record<AgentName, AgentDriver>> = {
  'claude-code': claudeCode,
  codex,
  'gemini-cli': geminiCli,
  opencode,
  'qwen-code': qwenCode,
  pi,
  copilot,
  cline,
  kilo,
}
