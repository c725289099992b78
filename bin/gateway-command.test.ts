import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { fillerText } from '../harness/filler.ts'
import { CaptureWriter } from '../reports/observed/capture/store.ts'
import { gatewayRig } from '../reports/observed/gateway/testing.ts'
import { checkCommand } from './check-command.ts'
import { gatewayCommand } from './gateway-command.ts'

const root = mkdtempSync(join(tmpdir(), 'cachelab-gateway-'))
const manifest = (id: string) => ({
  id,
  started: '2026-12-03T00:00:00.000Z',
  upstream: 'sim' as const,
  bodies: true,
})

/** Run a command with its stdout collected. */
async function output(command: () => Promise<number>): Promise<{ code: number; text: string }> {
  const written: string[] = []
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    written.push(String(chunk))
    return true
  })
  try {
    return { code: await command(), text: written.join('') }
  } finally {
    spy.mockRestore()
  }
}

beforeAll(async () => {
  const fail = (error: Error) => {
    throw error
  }
  const client = CaptureWriter.open(join(root, 'client'), manifest('client'), fail)
  const upstream = CaptureWriter.open(join(root, 'upstream'), manifest('upstream'), fail)
  const rig = await gatewayRig('fresh-cache-key', {
    client: (exchange) => client.write(exchange),
    upstream: (exchange) => upstream.write(exchange),
  })
  try {
    const openai = new OpenAI({ apiKey: 'client-key', baseURL: `${rig.front.url}/openai/v1`, maxRetries: 0 })
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'system', content: fillerText(2500, 'cli-gateway') },
    ]
    for (let turn = 0; turn < 4; turn += 1) {
      messages.push({ role: 'user', content: `Turn ${turn}: ${fillerText(100, `cli-${turn}`)}` })
      await openai.chat.completions.create({ model: 'gpt-5.4', messages, prompt_cache_key: 'cli-session' })
      messages.push({ role: 'assistant', content: 'OK.' })
    }
  } finally {
    await rig.close()
  }
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('cachelab gateway CLIENT_CAPTURE UPSTREAM_CAPTURE', () => {
  it('writes both routes and changes.csv, and check of the gateway route against the direct one fails naming the change', async () => {
    const out = join(root, 'out')
    const made = await output(() =>
      gatewayCommand([join(root, 'client'), join(root, 'upstream'), '--out', out]),
    )
    expect(made.code).toBe(0)
    expect(made.text).toContain('4 pairs (4 changed across the gateway, 0 client requests unpaired)')
    expect(existsSync(join(out, 'direct', 'summary.csv'))).toBe(true)
    const changes = readFileSync(join(out, 'changes.csv'), 'utf8').trim().split('\n')
    expect(changes).toHaveLength(5)
    expect(changes[2]).toContain('gateway-cache-key-overwritten: prompt_cache_key ""cli-session"" → ""gw-2""')
    const gated = await output(() =>
      checkCommand(['--baseline', join(out, 'direct'), '--out', join(out, 'gateway')]),
    )
    expect(gated.code).toBe(1)
    expect(gated.text).toContain('gateway-cache-key-overwritten')
  })

  it('keeps changes.csv in the gateway route’s folder, so check names what the gateway did that no number shows', async () => {
    const out = join(root, 'out-noted')
    await output(() => gatewayCommand([join(root, 'client'), join(root, 'upstream'), '--out', out]))
    const path = join(out, 'gateway', 'changes.csv')
    expect(readFileSync(path, 'utf8')).toBe(readFileSync(join(out, 'changes.csv'), 'utf8'))
    // As Claude Code Router's pairs read: every count 0 to the client, another model, fields gone.
    const [header = '', ...records] = readFileSync(path, 'utf8').trim().split('\n')
    const routed =
      '"gateway-wire-translated: anthropic-messages → openai-chat; gateway-model-changed: model claude-sonnet-4-6 → gpt-4.1; gateway-fields-dropped: metadata, thinking; gateway-usage-zeroed: usage all 0 to the client, upstream had 2000 input and 5 output tokens by the simulator\'s count (not reported to the gateway)"'
    const cells = (line: string) => line.split(',')
    const at = cells(header).indexOf('changes')
    writeFileSync(
      path,
      [
        header,
        ...records.map((line) =>
          [...cells(line).slice(0, at), routed, ...cells(line).slice(at + 1)].join(','),
        ),
      ]
        .join('\n')
        .concat('\n'),
    )
    const gated = await output(() =>
      checkCommand(['--baseline', join(out, 'direct'), '--out', join(out, 'gateway')]),
    )
    expect(gated.text).toContain('note: the gateway (')
    expect(gated.text).toContain(
      "  gateway-usage-zeroed on 4 of 4 requests: usage all 0 to the client, while the upstream request had tokens by the simulator's count (not reported to the gateway)",
    )
    expect(gated.text).toContain(
      '  gateway-model-changed on 4 of 4 requests: model claude-sonnet-4-6 → gpt-4.1',
    )
    expect(gated.text).toContain('  gateway-fields-dropped on 4 of 4 requests: metadata, thinking')
  })

  it('refuses one capture directory with a usage error', async () => {
    await expect(gatewayCommand([join(root, 'client')])).rejects.toThrow(/two capture directories/)
  })
})
