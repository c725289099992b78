import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { sdkLoop } from '../harness/loops/libraries/sdk.ts'
import type { LibraryLoop, LibraryLoopModule } from '../harness/loops/libraries/types.ts'
import { parseCsv } from '../reports/parse.ts'
import { SCENARIOS } from './index.ts'
import { run } from './matrix.ts'
import { planMatrix } from './run.ts'
import { libraryLoopsOf, libraryPlansOf } from './run-libraries.ts'
import type { Scenario } from './types.ts'

/**
 * A fake library on the reference loop: it prepends a line to the system prompt (so its requests differ
 * from the reference's at the system node) and reports cache writes as reads, as a library might.
 */
function fakeLibrary(): LibraryLoop {
  const reference = sdkLoop()
  return {
    name: 'ai-sdk',
    providers: ['anthropic'],
    caching: () => 'the fake way',
    async open(options) {
      const session = await reference.open({
        ...options,
        system: `Fake library preamble.\n${options.system}`,
      })
      return {
        setSystem: (text) => session.setSystem(`Fake library preamble.\n${text}`),
        setTools: (tools) => session.setTools(tools),
        async turn(user, execute) {
          const outcome = await session.turn(user, execute)
          return {
            ...outcome,
            reported: outcome.reported.map((usage) =>
              usage === undefined
                ? undefined
                : { ...usage, cacheRead: (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0) },
            ),
          }
        },
      }
    },
  }
}

const fake: LibraryLoopModule = { name: 'ai-sdk', packages: ['fake-ai'], load: async () => fakeLibrary() }
const absent: LibraryLoopModule = {
  name: 'ai-sdk',
  packages: ['fake-ai'],
  load: () => Promise.reject(new Error('the fake library is not built')),
}

describe('run --loop with client libraries', () => {
  it('runs the reference beside a library, side by side, and lists the providers it does not speak to', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-libraries-'))
    const result = await run({
      loops: ['ai-sdk'],
      scenarios: ['append-only'],
      providers: ['anthropic', 'gemini'],
      libraryModules: { 'ai-sdk': fake },
      out,
    })
    expect(new Set(result.rows.map((row) => row.loop))).toEqual(new Set(['sdk', 'ai-sdk']))
    const [reference, library] = result.libraries.comparisons
    expect(reference?.loop).toBe('sdk')
    expect(library).toMatchObject({ loop: 'ai-sdk', provider: 'anthropic', caching: 'the fake way' })
    expect(library?.firstDifference).toMatchObject({ turn: 1, step: 1 })
    expect(library?.firstDifference?.node).toMatch(/^system/)
    expect(library?.misread).toBeGreaterThan(0)
    expect(library?.firstMisread).toMatch(/^reported [\d,]+ read, wire [\d,]+$/)
    expect(reference?.misread).toBe(0)
    expect(
      result.inexpressible.filter((entry) => entry.action === 'session').map((entry) => entry.loop),
    ).toEqual(['sdk', 'ai-sdk'])
    const csv = parseCsv(readFileSync(join(out, 'libraries.csv'), 'utf8'))
    expect(csv.map((line) => `${line.provider} ${line.loop}`)).toEqual(['anthropic sdk', 'anthropic ai-sdk'])
    expect(existsSync(join(out, 'library-steps.csv'))).toBe(true)
    const manifest = JSON.parse(readFileSync(join(out, '.cachelab-manifest.json'), 'utf8'))
    expect(manifest).toMatchObject({ state: 'complete' })
    expect(manifest.files).toEqual(expect.arrayContaining(['libraries.csv', 'library-steps.csv']))
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('Client libraries side by side')
  })

  it('shows the AI SDK’s dropped breakpoint with its cost and LangChain’s and pi-ai’s refusals, in libraries.csv', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-libraries-'))
    await run({
      loops: ['ai-sdk', 'langchain', 'pi-ai'],
      scenarios: ['prompt-change'],
      providers: ['anthropic', 'deepseek'],
      out,
    })
    const csv = parseCsv(readFileSync(join(out, 'libraries.csv'), 'utf8'))
    const line = (provider: string, loop: string) => {
      const found = csv.find((entry) => entry.provider === provider && entry.loop === loop)
      if (found === undefined) throw new Error(`no ${loop} line on ${provider}`)
      return found
    }
    const aiSdk = line('anthropic', 'ai-sdk')
    expect(aiSdk.max_breakpoints_sent).toBe('4')
    expect(Number(aiSdk.max_breakpoints_requested)).toBeGreaterThan(4)
    expect(Number(aiSdk.requests_dropping_breakpoints)).toBeGreaterThan(0)
    expect(aiSdk.first_library_warning).toMatch(/Maximum 4 cache breakpoints exceeded/)
    expect(Number(aiSdk.cost_vs_reference_usd)).toBeGreaterThan(0)
    expect(Number(aiSdk.warm_hit_ratio_read_over_input)).toBeLessThan(
      Number(line('anthropic', 'sdk').warm_hit_ratio_read_over_input),
    )
    expect(Number(line('anthropic', 'langchain').refused_requests)).toBeGreaterThan(0)
    expect(line('anthropic', 'langchain').first_refusal).toMatch(/A maximum of 4 blocks with cache_control/)
    const piAi = line('deepseek', 'pi-ai')
    expect(piAi.refused_requests).toBe(piAi.requests)
    expect(piAi.first_refusal).toMatch(/developer/)
    expect(line('deepseek', 'sdk').refused_requests).toBe('0')
    expect(aiSdk.versions).toMatch(/^ai@\d/)
  })

  it('skips an absent library beside a loop that runs, and names what to install', async () => {
    const result = await run({
      loops: ['sdk', 'ai-sdk'],
      scenarios: ['append-only'],
      providers: ['openai-chat'],
      libraryModules: { 'ai-sdk': absent },
    })
    expect(result.libraries.absent).toEqual([
      expect.objectContaining({
        name: 'ai-sdk',
        reason: 'the fake library is not built',
        install: expect.stringMatching(/^npm i -D fake-ai/),
      }),
    ])
    expect(result.libraries.comparisons.map((entry) => entry.loop)).toEqual(['sdk'])
  })

  it('is a usage error when every loop asked for is absent, naming each install command', async () => {
    await expect(
      run({
        loops: ['ai-sdk'],
        scenarios: ['append-only'],
        providers: ['anthropic'],
        libraryModules: { 'ai-sdk': absent },
      }),
    ).rejects.toThrow(
      /no loop to run: ai-sdk is absent \(the fake library is not built; install: npm i -D fake-ai/,
    )
  })

  it('refuses --live for library loops', async () => {
    await expect(
      run({ loops: ['sdk'], scenarios: ['append-only'], providers: ['anthropic'], live: true }),
    ).rejects.toThrow(/--loop sdk runs on the simulator only/)
  })

  it('adds the reference loop first whenever another library loop runs', () => {
    expect(libraryLoopsOf(['model'])).toEqual([])
    expect(libraryLoopsOf(['langchain', 'model', 'ai-sdk'])).toEqual(['sdk', 'ai-sdk', 'langchain'])
    expect(libraryLoopsOf(['sdk'])).toEqual(['sdk'])
  })

  it('runs a library once per policy-only variant group, and every variant with its own script or rules', () => {
    const base = SCENARIOS.find((scenario) => scenario.name === 'append-only') as Scenario
    const scenario: Scenario = {
      ...base,
      variants: [
        { name: 'policy-a', policies: {} },
        { name: 'policy-b', build: {} },
        { name: 'no-idle', skip: ['idle'] },
        { name: 'other-rules', rules: {} },
      ],
    }
    const { plans } = planMatrix([scenario], ['anthropic', 'openai-chat'])
    const chosen = [...libraryPlansOf(plans)].map(
      (index) => `${plans[index]?.variant.name} ${plans[index]?.provider}`,
    )
    expect(chosen).toEqual([
      'policy-a anthropic',
      'policy-a openai-chat',
      'no-idle anthropic',
      'no-idle openai-chat',
      'other-rules anthropic',
      'other-rules openai-chat',
    ])
  })
})
