// The session worker on its own, as session-jobs.ts starts it (TypeScript through tsx-worker.mjs): the
// messages it answers a job with. session-jobs.test.ts runs whole sessions through it.

import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import { SCENARIOS } from './index.ts'
import type { FromWorker, ToWorker, WorkerSetup } from './session-jobs.ts'

/**
 * Start a worker with `setup` and send it `jobs` as the parent does, the next once the last is answered;
 * every message it sent, in order.
 */
async function answers(setup: WorkerSetup, jobs: ToWorker[]): Promise<FromWorker[]> {
  const worker = new Worker(new URL('./tsx-worker.mjs', import.meta.url), {
    workerData: setup,
    argv: [new URL('./session-worker.ts', import.meta.url).href],
  })
  try {
    const received: FromWorker[] = []
    const queue = [...jobs]
    await new Promise<void>((resolve, reject) => {
      worker.on('error', reject)
      worker.on('message', (message: FromWorker) => {
        received.push(message)
        if (message.kind === 'request') return
        const next = queue.shift()
        if (next === undefined) resolve()
        else worker.postMessage(next)
      })
      worker.postMessage(queue.shift())
    })
    return received
  } finally {
    await worker.terminate()
  }
}

describe('a session worker', () => {
  it('answers a job that names no scenario it was given with a failure of the invariant kind', async () => {
    const setup: WorkerSetup = {
      scenarios: [],
      runId: 'test',
      stream: false,
      sessionsDir: undefined,
      digests: false,
    }
    const job: ToWorker = {
      kind: 'session',
      index: 7,
      scenario: 3,
      variant: 0,
      provider: 'anthropic',
      model: undefined,
    }
    const [answer] = await answers(setup, [job])
    expect(answer).toMatchObject({
      kind: 'failed',
      index: 7,
      error: { cachelabKind: 'invariant', message: 'session 7 refers to no scenario or variant' },
    })
  })

  it('runs each session it is given: a request message per row, then the rows', async () => {
    const scenario = SCENARIOS.find((each) => each.name === 'append-only')
    if (scenario === undefined) throw new Error('no append-only scenario')
    const setup: WorkerSetup = {
      scenarios: [{ ...scenario, claims: [] }],
      runId: 'test',
      stream: false,
      sessionsDir: undefined,
      digests: false,
    }
    const job = (index: number, provider: ToWorker['provider']): ToWorker => ({
      kind: 'session',
      index,
      scenario: 0,
      variant: 0,
      provider,
      model: undefined,
    })
    const received = await answers(setup, [job(0, 'anthropic'), job(1, 'openai-chat')])
    const finished = received.filter((message) => message.kind === 'finished')
    expect(finished.map((message) => message.index)).toEqual([0, 1])
    for (const message of finished) {
      if (message.kind !== 'finished') continue
      const requests = received.filter((each) => each.kind === 'request' && each.index === message.index)
      expect(message.session.rows.length).toBeGreaterThan(1)
      expect(requests).toHaveLength(message.session.rows.length)
      expect(new Set(message.session.rows.map((row) => row.provider))).toEqual(
        new Set([message.index === 0 ? 'anthropic' : 'openai-chat']),
      )
    }
  })
})
