// A worker thread of a simulated run (session-jobs.ts): its own mock providers, one session at a
// time as the parent sends them, each session's log written to its planned path and its rows sent back.

import { readFileSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { CachelabError } from '../harness/errors.ts'
import { useCatalog } from '../providers/compatible.ts'
import { parseCatalogFile } from '../providers/compatible-file.ts'
import { startMockProviders } from '../providers/index.ts'
import { runSession, type SessionPlan } from './run.ts'
import {
  type FinishedSession,
  type FromWorker,
  type SessionJob,
  sessionBreakEvents,
  type ToWorker,
  type WorkerSetup,
} from './session-jobs.ts'

const port = parentPort
if (port === null) throw new CachelabError('invariant', 'session-worker runs as a worker thread only')
const setup = workerData as WorkerSetup
// A user's catalog file (the command line exported it): its compatible providers exist here too.
const catalogFile = process.env.CACHELAB_CATALOG?.trim()
if (catalogFile) useCatalog(parseCatalogFile(readFileSync(catalogFile, 'utf8'), catalogFile))
const mock = startMockProviders()
const send = (message: FromWorker) => port.postMessage(message)

/** The plan a job refers to, from the scenarios the worker was set up with. */
function planOf(job: SessionJob): SessionPlan {
  const scenario = setup.scenarios[job.scenario]
  const variant = scenario?.variants[job.variant]
  if (scenario === undefined || variant === undefined)
    throw new CachelabError('invariant', `session ${job.index} refers to no scenario or variant`)
  return {
    scenario,
    variant,
    provider: job.provider,
    ...(job.model !== undefined ? { model: job.model } : {}),
  }
}

async function runJob(job: SessionJob): Promise<FinishedSession> {
  const result = await runSession(planOf(job), {
    runId: setup.runId,
    stream: setup.stream,
    mock,
    ...(setup.sessionsDir !== undefined ? { sessionsDir: setup.sessionsDir } : {}),
    ...(setup.digests ? { digests: true } : {}),
    onRow: () => send({ kind: 'request', index: job.index }),
  })
  return {
    rows: result.rows,
    attempts: result.events.filter((event) => event.type === 'assistant/attempt'),
    breakEvents: sessionBreakEvents(result.rows, result.events),
    digests: result.digests,
  }
}

// Sessions arrive one at a time (the parent sends the next when this one is back), so they never overlap
// on the worker's one mock context.
port.on('message', (message: ToWorker) => {
  runJob(message).then(
    (session) => send({ kind: 'finished', index: message.index, session }),
    (error: unknown) =>
      send({
        kind: 'failed',
        index: message.index,
        error: {
          message: error instanceof Error ? error.message : String(error),
          cachelabKind: error instanceof CachelabError ? error.kind : undefined,
          stack: error instanceof Error ? error.stack : undefined,
        },
      }),
  )
})
