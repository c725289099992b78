import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { cachelabMcpServer, MCP_SERVER_NAME, MCP_TOOL_NAME } from './mcp.ts'

const folder = mkdtempSync(join(tmpdir(), 'cachelab-mcp-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))

/** Send JSON-RPC messages to the server on stdin; its answers, one a line. */
function talk(messages: readonly object[]): Array<Record<string, unknown>> {
  const server = cachelabMcpServer(folder)
  const out = execFileSync(server.command, server.args, {
    input: `${messages.map((message) => JSON.stringify(message)).join('\n')}\n`,
    encoding: 'utf8',
  })
  return out
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

describe("cachelab's MCP server", () => {
  it('is named for agents as node and a script in the folder given', () => {
    const server = cachelabMcpServer(folder)
    expect(server).toEqual({
      name: MCP_SERVER_NAME,
      command: process.execPath,
      args: [join(folder, 'cachelab-mcp-server.mjs')],
    })
  })

  it('initializes, lists its one tool and answers a call with its text; notifications get no answer', () => {
    const answers = talk([
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26' } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: MCP_TOOL_NAME, arguments: { text: 'hi' } },
      },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'other' } },
      { jsonrpc: '2.0', id: 5, method: 'nothing/here' },
    ])
    expect(answers.map((answer) => answer.id)).toEqual([1, 2, 3, 4, 5])
    expect(answers[0]?.result).toMatchObject({ protocolVersion: '2025-03-26', capabilities: { tools: {} } })
    expect(answers[1]?.result).toMatchObject({ tools: [{ name: MCP_TOOL_NAME }] })
    expect(answers[2]?.result).toEqual({ content: [{ type: 'text', text: 'hi' }] })
    expect(answers[3]?.error).toMatchObject({ code: -32602 })
    expect(answers[4]?.error).toMatchObject({ code: -32601 })
  })
})
