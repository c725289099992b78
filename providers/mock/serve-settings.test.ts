import { describe, expect, it } from 'vitest'
import { CachelabError } from '../../harness/errors.ts'
import { byteSize, captureStamp, liveUpstreams, selfUpstream, serveSettings } from './serve-settings.ts'

describe("serve's settings", () => {
  it('defaults to the simulator on loopback port 8787', () => {
    const settings = serveSettings({}, {})
    expect(settings).toMatchObject({ port: 8787, host: '127.0.0.1', exposed: false, upstream: 'sim' })
    expect(settings.liveBaseURLs).toBeUndefined()
  })

  it.each([
    [{ port: '70000' }, '--port must be 0-65535'],
    [{ 'memory-budget': '8' }, '--memory-budget must be a number of MiB, 16 or more'],
    [{ 'max-body': 'lots' }, '--max-body must be a size'],
    [{ upstream: 'cloud' }, '--upstream must be sim or live'],
    [{ host: '0.0.0.0' }, 'add --expose to mean it'],
    [{ 'record-bodies': true }, '--record-bodies needs --record DIR'],
    [{ 'record-no-text': true }, '--record-no-text needs --record DIR'],
    [{ record: 'x', 'record-bodies': true, 'record-no-text': true }, 'choose one'],
    [{ upstream: 'live', replay: 'x' }, '--replay answers from a recording on the simulator'],
    [{ upstream: 'live', faults: 'x' }, '--faults needs --upstream sim'],
    [{ upstream: 'live', replies: 'x' }, '--replies scripts the simulated model'],
  ])('refuses %o as a usage error', (values, message) => {
    let error: unknown
    try {
      serveSettings(values, {})
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(CachelabError)
    expect((error as CachelabError).kind).toBe('usage')
    expect((error as Error).message).toContain(message)
  })

  it('takes live upstreams from the environment and refuses one that is not http(s)', () => {
    const live = serveSettings({ upstream: 'live' }, { OPENAI_BASE_URL: 'http://staging.example/v1/' })
    expect(live.liveBaseURLs?.openai).toBe('http://staging.example/v1')
    expect(() => serveSettings({ upstream: 'live' }, { OPENAI_BASE_URL: 'ftp://x' })).toThrow(
      'OPENAI_BASE_URL must be an http(s) URL',
    )
  })

  it('names the variable that points the live proxy at itself', () => {
    const urls = serveSettings(
      { upstream: 'live' },
      { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9000' },
    ).liveBaseURLs
    if (urls === undefined) throw new Error('no live upstreams')
    expect(selfUpstream(urls, '9000')).toBe('ANTHROPIC_BASE_URL=http://127.0.0.1:9000')
    expect(selfUpstream(urls, '9001')).toBeUndefined()
  })

  it('reads sizes and stamps captures by time', () => {
    expect(byteSize('2k')).toBe(2048)
    expect(byteSize('-1')).toBeUndefined()
    expect(captureStamp(new Date('2026-11-30T16:23:00.000Z'))).toBe('20261130-162300')
  })
})

describe('the live upstreams', () => {
  it("take Bedrock's base URL as the others', and its region otherwise", () => {
    const cwd = process.cwd()
    // No `.env` is read from a folder that has none.
    process.chdir(new URL('.', import.meta.url).pathname)
    try {
      expect(liveUpstreams({ BEDROCK_BASE_URL: 'https://bedrock.example.test/' }).bedrock).toBe(
        'https://bedrock.example.test',
      )
      expect(liveUpstreams({ AWS_REGION: 'eu-central-1' }).bedrock).toBe(
        'https://bedrock-runtime.eu-central-1.amazonaws.com',
      )
      expect(liveUpstreams({}).bedrock).toBe('https://bedrock-runtime.us-east-1.amazonaws.com')
      expect(() => liveUpstreams({ BEDROCK_BASE_URL: 'ftp://x' })).toThrow(
        'BEDROCK_BASE_URL must be an http(s) URL, not "ftp://x"',
      )
    } finally {
      process.chdir(cwd)
    }
  })
})
