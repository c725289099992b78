// Issue 11's acceptance, as a user would run it: `cachelab serve --record` started as a process, three
// third-party clients pointed at it with docs/serve.md's base URL and no cachelab header, each holding one
// conversation — five turns, a system-prompt rewrite, two more turns — and `cachelab report` on the
// capture. Each conversation must be one session with a row per request, the rewrite step's break at
// system[0], and the cache reads the client itself reported.

import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAnthropic } from '@ai-sdk/anthropic'
import { ChatAnthropic } from '@langchain/anthropic'
import { type BaseMessage, HumanMessage, SystemMessage, type UsageMetadata } from '@langchain/core/messages'
import { type Context, complete, getModel } from '@mariozechner/pi-ai'
import { generateText, type ModelMessage } from 'ai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fillerText } from '../harness/filler.ts'
import { reportCapture } from './report.ts'

const KEY = 'capture-acceptance-test-key'
const MODEL = 'claude-sonnet-4-6'

/** A conversation in a client's own terms: set the system prompt, ask, get the reported cache read. */
interface Conversation {
  setSystem(system: string): void
  ask(user: string): Promise<number>
}

function aiSdk(baseURL: string): Conversation {
  const model = createAnthropic({ apiKey: KEY, baseURL })(MODEL)
  let system = ''
  const messages: ModelMessage[] = []
  return {
    setSystem: (text) => {
      system = text
    },
    async ask(user) {
      messages.push({ role: 'user', content: user })
      const result = await generateText({
        model,
        system,
        messages,
        maxRetries: 0,
        providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
      })
      messages.push({ role: 'assistant', content: result.text })
      return result.usage.inputTokenDetails.cacheReadTokens ?? 0
    },
  }
}

function langChain(baseURL: string): Conversation {
  const model = new ChatAnthropic({
    model: MODEL,
    apiKey: KEY,
    maxRetries: 0,
    anthropicApiUrl: baseURL,
    invocationKwargs: { cache_control: { type: 'ephemeral' } },
  })
  const messages: BaseMessage[] = [new SystemMessage('')]
  return {
    setSystem: (text) => {
      messages[0] = new SystemMessage(text)
    },
    async ask(user) {
      messages.push(new HumanMessage(user))
      const reply = await model.invoke(messages)
      messages.push(reply)
      const usage = (reply as unknown as { usage_metadata?: UsageMetadata }).usage_metadata
      return usage?.input_token_details?.cache_read ?? 0
    },
  }
}

function piAi(baseURL: string): Conversation {
  const model = { ...getModel('anthropic', MODEL), baseUrl: baseURL }
  const context: Context = { systemPrompt: '', messages: [] }
  return {
    setSystem: (text) => {
      context.systemPrompt = text
    },
    async ask(user) {
      context.messages.push({ role: 'user', content: user, timestamp: 0 })
      const reply = await complete(model, context, { apiKey: KEY })
      if (reply.stopReason === 'error') throw new Error(`pi-ai: ${reply.errorMessage}`)
      context.messages.push(reply)
      return reply.usage.cacheRead
    },
  }
}

let server: ChildProcess
let baseURL = ''
const dir = mkdtempSync(join(tmpdir(), 'cachelab-clients-capture-'))

beforeAll(async () => {
  server = spawn(process.execPath, ['bin/cachelab.js', 'serve', '--port', '0', '--record', dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  baseURL = await new Promise<string>((resolve, reject) => {
    let out = ''
    server.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const match = /ANTHROPIC_BASE_URL=(\S+)/.exec(out)
      if (match !== null) resolve(match[1] as string)
    })
    server.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)))
  })
})

afterAll(() => {
  server.kill('SIGTERM')
})

/** One step per turn, turns 1 to 8. */
const EIGHT_TURNS = Array.from({ length: 8 }, (_, index) => `${index + 1}.1`)

describe('three third-party clients captured by serve --record, reported by cachelab report', () => {
  it('gives one session per conversation, a row per request, and the rewrite at system[0] with its cause', async () => {
    const clients = { 'AI SDK': aiSdk, LangChain: langChain, 'pi-ai': piAi }
    const reported = new Map<string, number[]>()
    for (const [name, open] of Object.entries(clients)) {
      const conversation = open(baseURL)
      const system = fillerText(1500, `system of ${name}`)
      conversation.setSystem(system)
      const reads: number[] = []
      for (let turn = 1; turn <= 8; turn += 1) {
        if (turn === 6) conversation.setSystem(`Today the user prefers short answers.\n${system}`)
        reads.push(await conversation.ask(`${name} turn ${turn}: ${fillerText(60, `${name}-${turn}`)}`))
      }
      reported.set(name, reads)
    }

    const { rows } = reportCapture(dir)
    const sessions = [...new Set(rows.map((row) => row.variant))]
    expect(sessions).toHaveLength(3)
    for (const session of sessions) {
      const own = rows.filter((row) => row.variant === session)
      expect(own.map((row) => `${row.turn}.${row.step}`)).toEqual(EIGHT_TURNS)
      const breaks = own.filter((row) => row.breakCause !== undefined)
      expect(breaks.map((row) => [row.turn, row.breakNode, row.breakCause])).toEqual([
        [6, 'system[0]', 'system-replace'],
      ])
      expect(breaks[0]?.lostTokens).toBeGreaterThan(1000)
    }
    // Each client's own reported reads are its session's read column, in order.
    const readsBySession = sessions.map((session) =>
      rows.filter((row) => row.variant === session).map((row) => row.cacheReadTokens),
    )
    for (const reads of reported.values()) expect(readsBySession).toContainEqual(reads)
  })
})
