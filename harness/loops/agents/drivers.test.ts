import { describe, expect, it } from 'vitest'
import { AGENT_DRIVERS, AGENT_NAMES, PLACEHOLDER_KEY } from './index.ts'

const place = { home: '/scratch/home', workspace: '/scratch/workspace' }
const urls = {
  anthropic: 'http://127.0.0.1:9/anthropic',
  openai: 'http://127.0.0.1:9/openai/v1',
  gemini: 'http://127.0.0.1:9/gemini',
}

describe('the agent drivers', () => {
  it('point every agent at the server with a placeholder key, in its scratch home', () => {
    for (const name of AGENT_NAMES) {
      const driver = AGENT_DRIVERS[name]
      const files = driver.files(place, urls, {})
      const command = driver.command(place, urls, { prompt: 'Hello there' }, {})
      const everything = JSON.stringify([files, command])
      expect(everything, name).toContain('127.0.0.1:9')
      expect(everything, name).toContain(PLACEHOLDER_KEY)
      expect(command.args, name).toContain('Hello there')
      for (const file of files) expect(file.path.startsWith('/scratch/'), `${name} ${file.path}`).toBe(true)
    }
  })

  it("continue a session and switch its model with each agent's own flags", () => {
    const args = (name: (typeof AGENT_NAMES)[number]) =>
      AGENT_DRIVERS[name].command(place, urls, { prompt: 'p', continues: true, model: 'm' }, {}).args
    expect(args('claude-code')).toEqual(expect.arrayContaining(['--continue', '--model', 'm']))
    expect(args('codex').slice(0, 7)).toEqual([
      'exec',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      '--json',
      'resume',
      '--last',
      '-m',
    ])
    expect(args('gemini-cli')).toEqual(expect.arrayContaining(['--resume', 'latest', '-m', 'm']))
    expect(args('opencode')).toEqual(expect.arrayContaining(['--continue', '-m', 'cachelab/m']))
    expect(args('qwen-code')).toEqual(expect.arrayContaining(['--continue', '--model', 'm']))
    expect(args('pi')).toEqual(expect.arrayContaining(['-c', '--model', 'cachelab/m']))
  })
})
