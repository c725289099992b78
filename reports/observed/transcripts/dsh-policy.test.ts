import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { SeriesStartPolicy } from '../../../harness/policies.ts'
import { readDsh } from './dsh.ts'
import { firstDifference, SeriesStartRederivation } from './dsh-policy.ts'
import { type DshSystemNode, readHeader } from './dsh-request.ts'
import type { ObservedRequest, PolicyRederivation } from './types.ts'

const testdata = (name: string) => fileURLToPath(new URL(`testdata/${name}`, import.meta.url))
// The same conversation recorded twice: turn 4 starts a series after a prune with the prompt unchanged
// (consolidate clears the appended prompt node and rewrites node 0; keep-live leaves both), and turn 6's
// compaction covers the appended prompt node.
const CONSOLIDATE = testdata('dsh-c-consolidate.jsonl')
const KEEP_LIVE = testdata('dsh-c-keep-live.jsonl')

async function read(file: string, seriesStart?: SeriesStartPolicy): Promise<ObservedRequest[]> {
  const requests: ObservedRequest[] = []
  for await (const request of readDsh(file, {
    lenient: false,
    onProblem: () => {},
    ...(seriesStart !== undefined ? { seriesStart } : {}),
  }))
    requests.push(request)
  return requests
}

type Rederived = Extract<PolicyRederivation, { kind: 'rederived' }>

function rederived(request: ObservedRequest | undefined): Rederived {
  const found = request?.rederived
  if (found?.kind !== 'rederived') throw new Error(`not re-derived: ${JSON.stringify(found)}`)
  return found
}

describe('a generation C DSH log re-derived under the other series-start policy', () => {
  it("rebuilds, request by request, the bodies the other policy's own log recorded", async () => {
    const underKeepLive = await read(CONSOLIDATE, 'keep-live')
    const keptLive = await read(KEEP_LIVE)
    expect(underKeepLive.map((request) => rederived(request).body)).toEqual(
      keptLive.map((request) => request.request?.body),
    )
    const underConsolidate = await read(KEEP_LIVE, 'consolidate')
    const consolidated = await read(CONSOLIDATE)
    expect(underConsolidate.map((request) => rederived(request).body)).toEqual(
      consolidated.map((request) => request.request?.body),
    )
  })

  it('differs first at node 0 of the series-start request, and converges once both rewrote node 0', async () => {
    const requests = await read(CONSOLIDATE, 'keep-live')
    expect(requests.map((request) => rederived(request).firstDifference)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      0,
      0,
      undefined,
    ])
    // Keep-live kept the first prompt at node 0 and the appended one live later in history.
    const messages = rederived(requests[5]).body.messages as Array<{ role: string; content: string }>
    expect(messages[0]?.content).not.toMatch(/Build update/)
    expect(messages.filter((message) => message.role === 'system').at(-1)?.content).toMatch(/Build update/)
  })

  it('tells which policy each log was recorded under from its series starts', async () => {
    const found = (requests: ObservedRequest[]) =>
      requests.map((request) => [rederived(request).seriesStart, rederived(request).recordedAs])
    const expected = (turn4: string) => [
      ...Array.from({ length: 5 }, () => [false, undefined]),
      [true, turn4],
      [false, undefined],
      // Turn 6: the compaction took keep-live's live prompt, so both policies rewrite node 0 alike.
      [true, 'either'],
    ]
    expect(found(await read(CONSOLIDATE, 'keep-live'))).toEqual(expected('consolidate'))
    expect(found(await read(KEEP_LIVE, 'keep-live'))).toEqual(expected('keep-live'))
  })

  it('under the policy the log was recorded with, re-derives the recorded bodies with their own messages', async () => {
    const requests = await read(CONSOLIDATE, 'consolidate')
    for (const request of requests) {
      const body = rederived(request).body
      expect(body).toEqual(request.request?.body)
      expect(rederived(request).firstDifference).toBeUndefined()
    }
    // Unchanged nodes share their wire objects with the recorded body.
    const recorded = requests[4]?.request?.body.messages as unknown[]
    expect((rederived(requests[4]).body.messages as unknown[])[3]).toBe(recorded[3])
  })

  it('leaves a generation B log, whose prompt is in the header, and its summarizer call as not applicable', async () => {
    const requests = await read(testdata('dsh-session.jsonl'), 'keep-live')
    expect(requests.map((request) => request.rederived?.kind)).toEqual(Array(6).fill('not-applicable'))
    expect(requests[0]?.rederived).toMatchObject({ reason: expect.stringMatching(/generation B/) })
    expect(requests[3]?.rederived).toMatchObject({ reason: expect.stringMatching(/summarizer/) })
  })
})

describe('the series-start decision of one window', () => {
  const header = readHeader({
    header: { config: { provider: 'deepseek-official', model: 'deepseek-flash' } },
  })
  const system = (text: string) => ({ role: 'system', content: [{ type: 'text', text }] })

  /** Two system nodes, the later one live; a series start commits `commits` on the recorded side. */
  function seriesStart(policy: SeriesStartPolicy, commits: Array<[number, number, string]>): Rederived {
    let recorded: DshSystemNode[] = [
      { seq: 0, text: 'A' },
      { seq: 2, text: 'B' },
    ]
    const rederivation = new SeriesStartRederivation(policy, () => recorded)
    rederivation.context({ systemPromptUpdate: 'in-history' })
    rederivation.header(header, { reason: 'initial' })
    rederivation.append(0, system('A'), true)
    rederivation.append(1, { role: 'user', content: [{ type: 'text', text: 'Hi' }] }, false)
    rederivation.append(2, system('B'), true)
    rederivation.build({})
    rederivation.boundary()
    for (const [seq, start, text] of commits) {
      rederivation.replace(seq, start, start, system(text), true)
      recorded = recorded.map((node) => (node.seq === start ? { seq, text } : node))
    }
    rederivation.header(header, { reason: 'series', startsSeries: true })
    return rederived({ rederived: rederivation.build({}) } as ObservedRequest)
  }

  it('calls commits that follow no rule neither, and re-derives them by the policy all the same', () => {
    // Rewriting node 0 to the live prompt but leaving the later node live: neither policy does that.
    const keptLive = seriesStart('keep-live', [[3, 0, 'B']])
    expect(keptLive.recordedAs).toBe('neither')
    expect(keptLive.body.messages).toEqual([
      { role: 'system', content: 'A' },
      { role: 'user', content: 'Hi' },
      { role: 'system', content: 'B' },
    ])
    expect(seriesStart('consolidate', [[3, 0, 'B']]).body.messages).toEqual([
      { role: 'system', content: 'B' },
      { role: 'user', content: 'Hi' },
    ])
  })

  it('names the policy whose commits the recorded ones are', () => {
    expect(
      seriesStart('keep-live', [
        [3, 2, ''],
        [4, 0, 'B'],
      ]).recordedAs,
    ).toBe('consolidate')
    expect(seriesStart('consolidate', []).recordedAs).toBe('keep-live')
  })

  it('compares two bodies message by message, by reference first', () => {
    const shared = { role: 'user', content: 'x' }
    expect(firstDifference([shared, shared], [shared, { ...shared }])).toBeUndefined()
    expect(firstDifference([shared], [shared, shared])).toBe(1)
    expect(firstDifference([{ role: 'system', content: 'A' }], [{ role: 'system', content: 'B' }])).toBe(0)
  })
})
