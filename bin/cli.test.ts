import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { STEP_COLUMNS } from '../reports/types.ts'
import { runCli, withEnv } from './testing.ts'

describe('cachelab run', () => {
  it('runs a scenario, prints a summary and writes the CSVs and session logs', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-cli-'))
    const { code, stdout } = await runCli([
      'run',
      '--scenario',
      'append-only',
      '--provider',
      'openai-chat',
      '--out',
      out,
    ])
    expect(code).toBe(0)
    expect(stdout).toContain('append-only')
    expect(readFileSync(join(out, 'steps.csv'), 'utf8').split('\n')[0]).toBe(STEP_COLUMNS.join(','))
    expect(readFileSync(join(out, 'summary.csv'), 'utf8')).toContain('append-only,default,openai-chat')
    expect(readdirSync(join(out, 'sessions'))).toEqual(['append-only.default.openai-chat.jsonl'])
  })

  it('prints the summary as JSON with --json', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-cli-'))
    const { code, stdout } = await runCli([
      'run',
      '--scenario',
      'append-only',
      '--provider',
      'openai-chat',
      '--out',
      out,
      '--json',
    ])
    expect(code).toBe(0)
    const parsed = JSON.parse(stdout)
    expect(parsed.summary[0]).toMatchObject({ scenario: 'append-only', provider: 'openai-chat' })
  })

  it.each([
    [['run', '--provider', 'nope'], /unknown provider "nope"/],
    [['run', '--scenario', 'nope'], /unknown scenario "nope"/],
    [['run', '--bogus'], /Unknown option '--bogus'/],
    [['run', '--provider', 'openai-chat', '--model', 'gpt-0'], /unknown openai-chat model "gpt-0"/],
    [['frobnicate'], /unknown command "frobnicate"/],
  ])('exits 2 with a one-line reason for %j', async (argv, reason) => {
    const { code, stderr } = await runCli(argv)
    expect(code).toBe(2)
    expect(stderr).toMatch(reason)
    expect(stderr.trim().split('\n')).toHaveLength(1)
  })
})

describe('the cachelab executable', () => {
  it('runs the TypeScript CLI without a build step', () => {
    const result = spawnSync(process.execPath, ['bin/cachelab.js', 'list'], { encoding: 'utf8' })
    expect(result.status).toBe(0)
    expect(result.stdout).toContain('append-only')
  })
})

describe('cachelab run --live', () => {
  it('runs against the base URLs and keys of the environment (here a loopback server) and predicts each step', async () => {
    const { startLoopback } = await import('../providers/mock/loopback.ts')
    const server = await startLoopback({ upstream: 'sim', port: 0 })
    const out = mkdtempSync(join(tmpdir(), 'cachelab-live-'))
    const env = { DEEPSEEK_API_KEY: 'cachelab-test-live-key', DEEPSEEK_BASE_URL: server.baseURLs.deepseek }
    const argv = ['run', '--live', '--scenario', 'append-only', '--provider', 'deepseek', '--out', out]
    const { code, stdout } = await withEnv(env, () => runCli(argv)).finally(() => server.close())
    expect(code).toBe(0)
    const steps = readFileSync(join(out, 'steps.csv'), 'utf8')
    expect(steps.split('\n')[1]).toMatch(/^live-/)
    expect(steps).not.toContain('cachelab-test-live-key')
    expect(readFileSync(join(out, 'summary.csv'), 'utf8')).toContain('append-only,default,deepseek')
    expect(stdout).toContain('append-only')
  })

  it('names the missing key variable and exits 2', async () => {
    const out = mkdtempSync(join(tmpdir(), 'x-'))
    const argv = ['run', '--live', '--scenario', 'append-only', '--provider', 'anthropic', '--out', out]
    const { code, stderr } = await withEnv({ ANTHROPIC_API_KEY: undefined }, () => runCli(argv))
    expect(code).toBe(2)
    expect(stderr).toContain('ANTHROPIC_API_KEY')
  })
})
describe('cachelab run output', () => {
  it('writes a self-contained report.html beside the CSVs', async () => {
    const out = mkdtempSync(join(tmpdir(), 'cachelab-html-'))
    const { code } = await runCli([
      'run',
      '--scenario',
      'prompt-change',
      '--provider',
      'anthropic',
      '--out',
      out,
    ])
    expect(code).toBe(0)
    const html = readFileSync(join(out, 'report.html'), 'utf8')
    expect(html).toContain('<svg')
    expect(html).toContain('prompt-change')
    expect(html).not.toMatch(/https?:\/\//)
  })
})
