// cachelab's tiny MCP server for agent scenarios: JSON-RPC 2.0 over stdio, one message a line, one tool
// (`cachelab_echo`, which answers with its text). It is written into the session's scratch home as a
// plain node script (no dependencies) and named in the agent's settings; a script kept as text, not as
// a file beside this one, is there wherever cachelab runs from (the repository, its dev build, dist/).

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { McpServer } from './types.ts'

/** The name agents list the server under. */
export const MCP_SERVER_NAME = 'cachelab'

/** The one tool the server has. */
export const MCP_TOOL_NAME = 'cachelab_echo'

/** The server's source: a node ES module. */
export const MCP_SERVER_SCRIPT = `import { createInterface } from 'node:readline'

const TOOL = {
  name: 'cachelab_echo',
  description: 'Echo the given text back.',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', description: 'The text to echo.' } },
    required: ['text'],
  },
}

function answer(id, result) {
  process.stdout.write(\`\${JSON.stringify({ jsonrpc: '2.0', id, result })}\\n\`)
}

function refuse(id, code, message) {
  process.stdout.write(\`\${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\\n\`)
}

function handle(message) {
  const { id, method, params } = message
  if (id === undefined || id === null) return
  if (method === 'initialize')
    return answer(id, {
      protocolVersion: params?.protocolVersion ?? '2025-06-18',
      capabilities: { tools: {} },
      serverInfo: { name: 'cachelab', version: '1.0.0' },
    })
  if (method === 'ping') return answer(id, {})
  if (method === 'tools/list') return answer(id, { tools: [TOOL] })
  if (method === 'tools/call') {
    if (params?.name !== TOOL.name) return refuse(id, -32602, \`unknown tool \${params?.name}\`)
    return answer(id, { content: [{ type: 'text', text: String(params?.arguments?.text ?? '') }] })
  }
  if (method === 'resources/list') return answer(id, { resources: [] })
  if (method === 'prompts/list') return answer(id, { prompts: [] })
  refuse(id, -32601, \`method \${method} not found\`)
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === '') return
  try {
    handle(JSON.parse(line))
  } catch {
    refuse(null, -32700, 'parse error')
  }
})
`

/** Write the server into `folder` and name it as agents' settings take it: node and the script's path. */
export function cachelabMcpServer(folder: string, node: string = process.execPath): McpServer {
  mkdirSync(folder, { recursive: true })
  const script = join(folder, 'cachelab-mcp-server.mjs')
  writeFileSync(script, MCP_SERVER_SCRIPT)
  return { name: MCP_SERVER_NAME, command: node, args: [script] }
}
