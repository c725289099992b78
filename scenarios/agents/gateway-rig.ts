// What the real-gateway tests share: a free port, and Claude Code Router started in a home of its own with
// one provider, one of serve's Chat Completions endpoints (the router pinned, installed into the agents'
// cache folder). The captures on both sides come from `recording` (reports/observed/gateway/testing.ts).

import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { type AddressInfo, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { installedAgent } from '../../harness/loops/agents/install.ts'

/** Claude Code Router, pinned: 3.1.1 does not install (a dependency is not on the registry). */
export const ROUTER = { package: '@musistudio/claude-code-router', version: '2.0.0', bin: 'ccr' }

/** A port free on 127.0.0.1 a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** A process serving on `url`, once it answers. */
export interface StartedGateway {
  url: string
  child: ChildProcess
}

/**
 * The router in a home of its own, its one provider `chatURL` (a Chat Completions base, `…/chat/completions`
 * appended) on `model`, every request routed there. Resolves once it answers.
 */
export async function startRouter(chatURL: string, model: string): Promise<StartedGateway> {
  const bin = await installedAgent(ROUTER)
  const port = await freePort()
  const home = mkdtempSync(join(tmpdir(), 'cachelab-ccr-'))
  mkdirSync(join(home, '.claude-code-router'))
  writeFileSync(
    join(home, '.claude-code-router', 'config.json'),
    JSON.stringify({
      PORT: port,
      LOG: false,
      Providers: [
        { name: 'sim', api_base_url: `${chatURL}/chat/completions`, api_key: 'router-key', models: [model] },
      ],
      Router: { default: `sim,${model}` },
    }),
  )
  const child = spawn(process.execPath, [bin, 'start'], {
    env: { ...process.env, HOME: home },
    stdio: 'ignore',
  })
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const up = await fetch(`${url}/`).then(
      () => true,
      () => false,
    )
    if (up) return { url, child }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  child.kill()
  throw new Error('Claude Code Router did not start')
}
