// What the library loops' tests share: one loopback serve on the simulator per test file, and a built-in
// scenario's first variant run on a loop through the runner.

import { afterAll, beforeAll } from 'vitest'
import { type LoopbackServer, startLoopback } from '../../../providers/mock/loopback.ts'
import { findScenario } from '../../../scenarios/index.ts'
import { type LibrarySessionResult, runLibrarySession } from '../../../scenarios/run-library.ts'
import type { ProviderId } from '../../types.ts'
import type { LibraryLoop } from './types.ts'

/** Start a loopback serve before the file's tests and close it after; call the result inside a test. */
export function loopbackForTests(): () => LoopbackServer {
  let server: LoopbackServer | undefined
  beforeAll(async () => {
    server = await startLoopback({ upstream: 'sim', port: 0 })
  })
  afterAll(async () => {
    await server?.close()
  })
  return () => {
    if (server === undefined) throw new Error('the loopback serve starts before the tests')
    return server
  }
}

/** Run a built-in scenario's first variant on a loop, on a provider (and a model other than its default). */
export function runScenario(
  server: LoopbackServer,
  loop: LibraryLoop,
  name: string,
  provider: ProviderId,
  model?: string,
): Promise<LibrarySessionResult> {
  const scenario = findScenario(name)
  const variant = scenario?.variants[0]
  if (scenario === undefined || variant === undefined) throw new Error(`no scenario ${name}`)
  return runLibrarySession(
    { scenario, variant, provider, ...(model === undefined ? {} : { model }) },
    { runId: 'test', server, loop },
  )
}
