import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { deriveRequest } from './derive.ts'
import { AgentLoop } from './loop.ts'
import { DEFAULT_POLICIES } from './policies.ts'
import type { RequestRecord } from './ports.ts'
import { seededRandom } from './random.ts'
import { DEFAULT_PACE } from './script.ts'
import { SessionProjection } from './session.ts'
import { JsonlSessionWriter, readSessionLog } from './store.ts'
import { say, testLoop, withTool } from './testing.ts'

describe('a 1,000-step session', () => {
  it('round-trips through the JSONL store and re-derives every request byte-equal from its log prefix', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'roundtrip-')), 'session.jsonl')
    let writer = JsonlSessionWriter.create(file)
    const base = testLoop({ route: 'unsupported', policies: { sessionPrefix: 'frozen' } })
    const records: RequestRecord[] = []
    const env = {
      sessionId: 'test',
      clock: base.clock,
      random: seededRandom(7),
      llm: base.port,
      sink: (event: Parameters<JsonlSessionWriter['append']>[0]) => writer.append(event),
      onRequest: (record: RequestRecord) => records.push(record),
    }
    const setup = {
      policies: { ...DEFAULT_POLICIES, sessionPrefix: 'frozen' as const },
      route: 'unsupported' as const,
      toolUpdate: 'unsupported' as const,
      pace: DEFAULT_PACE,
      maxRetries: 2,
    }
    let loop = AgentLoop.start(env, setup)
    const world = base.world
    let steps = 0
    for (let turn = 1; steps < 1000; turn += 1) {
      if (turn === 100) world.system = 'A changed prompt.'
      if (turn === 150) loop.prune({ thresholdChars: 20, keepChars: 10, keep: 'middle', skipLastNodes: 4 })
      if (turn === 200) await loop.compact(6, 40, world)
      if (turn === 300) {
        writer.close()
        const resumed = JsonlSessionWriter.resume(file)
        writer = resumed.writer
        world.prefixSource = 'drifted'
        loop = AgentLoop.resume(env, setup, resumed.log.events)
      }
      await loop.turn(
        turn % 3 === 0 ? say(`turn ${turn}`) : withTool(`turn ${turn}`, `result ${turn} `.repeat(5)),
        world,
      )
      steps = records.filter((record) => record.call.purpose === 'step').length
    }
    writer.close()

    const { events, torn } = readSessionLog(file)
    expect(torn).toBeUndefined()
    expect(events).toEqual(loop.session.log)
    const projection = SessionProjection.empty('test')
    let applied = 0
    for (const record of records.filter((entry) => entry.call.purpose === 'step')) {
      while (applied < record.logLength) projection.apply(events[applied++] as (typeof events)[number])
      expect(JSON.stringify(deriveRequest(projection))).toBe(JSON.stringify(record.call.request))
    }
    expect(steps).toBeGreaterThanOrEqual(1000)
  })
})
