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
    expect(args('copilot')).toEqual(expect.arrayContaining(['--continue', '--model', 'm']))
    expect(args('kilo')).toEqual(['run', '--auto', '--format', 'json', '--continue', '-m', 'cachelab/m', 'p'])
    expect(
      AGENT_DRIVERS.kilo.command(place, urls, { prompt: '/compact', continues: true }, {}).args.slice(-3),
    ).toEqual(['--continue', '--command', 'compact'])
  })

  it('refuse to continue a Cline session, which `cline --json` cannot, rather than start a new one', () => {
    const cline = AGENT_DRIVERS.cline
    expect(cline.command(place, urls, { prompt: 'p', model: 'm' }, {}).args).toEqual([
      '--json',
      '--model',
      'm',
      'p',
    ])
    expect(() => cline.command(place, urls, { prompt: 'p', continues: true }, {})).toThrow(/--id/)
    const providers = JSON.parse(cline.files(place, urls, {})[0]?.text ?? '{}')
    expect(providers.providers.anthropic.settings).toMatchObject({
      provider: 'anthropic',
      baseUrl: urls.anthropic,
      model: 'claude-sonnet-4-6',
    })
  })

  it('resume a session by its id, and fork Claude Code from it into a new one', () => {
    const args = (name: 'claude-code' | 'codex', fork?: boolean) =>
      AGENT_DRIVERS[name].command(
        place,
        urls,
        { prompt: 'p', resume: 'id-1', continues: true, ...(fork !== undefined ? { fork } : {}) },
        {},
      ).args
    expect(args('claude-code', true)).toEqual(expect.arrayContaining(['--resume', 'id-1', '--fork-session']))
    expect(args('claude-code')).not.toContain('--fork-session')
    expect(args('claude-code')).not.toContain('--continue')
    expect(args('codex').slice(4)).toEqual(['resume', 'id-1', 'p'])
    const copilot = AGENT_DRIVERS.copilot.command(
      place,
      urls,
      { prompt: 'p', resume: 'id-1', continues: true },
      {},
    )
    expect(copilot.args).toContain('--resume=id-1')
    expect(copilot.args).not.toContain('--continue')
  })

  it('send Copilot CLI a Claude model on the Messages wire, any other on the Responses wire', () => {
    const env = (model: string) => AGENT_DRIVERS.copilot.command(place, urls, { prompt: 'p', model }, {}).env
    expect(env('claude-haiku-4-5')).toMatchObject({
      COPILOT_PROVIDER_TYPE: 'anthropic',
      COPILOT_PROVIDER_BASE_URL: urls.anthropic,
    })
    expect(env('gpt-5.4-mini')).toMatchObject({
      COPILOT_PROVIDER_TYPE: 'openai',
      COPILOT_PROVIDER_BASE_URL: urls.openai,
      COPILOT_PROVIDER_WIRE_API: 'responses',
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_HEADERS: expect.stringMatching(/^x-cachelab-session: copilot-[0-9a-f]{8}$/),
    })
  })
})

describe("the drivers' capabilities", () => {
  const server = { name: 'cachelab', command: '/usr/bin/node', args: ['/scratch/home/mcp.mjs'] }

  it('name the MCP server in the settings of every agent that takes one, and only with one', () => {
    for (const name of AGENT_NAMES) {
      const driver = AGENT_DRIVERS[name]
      const without = JSON.stringify([
        driver.files(place, urls, {}),
        driver.command(place, urls, { prompt: 'p' }, {}),
      ])
      const options = { mcpServers: [server] }
      const withServer = JSON.stringify([
        driver.files(place, urls, options),
        driver.command(place, urls, { prompt: 'p' }, options),
      ])
      expect(without, name).not.toContain('/scratch/home/mcp.mjs')
      if (driver.capabilities.mcp === true) expect(withServer, name).toContain('/scratch/home/mcp.mjs')
      else expect(driver.capabilities.mcp.unsupported, name).not.toBe('')
    }
    const codexConfig = AGENT_DRIVERS.codex.files(place, urls, { mcpServers: [server] })[0]?.text ?? ''
    expect(codexConfig).toContain(
      '[mcp_servers.cachelab]\ncommand = "/usr/bin/node"\nargs = ["/scratch/home/mcp.mjs"]',
    )
    expect(
      AGENT_DRIVERS['claude-code'].command(place, urls, { prompt: 'p' }, { mcpServers: [server] }).args,
    ).toEqual(expect.arrayContaining(['--mcp-config', '/scratch/home/cachelab-mcp.json']))
    const copilot = AGENT_DRIVERS.copilot.files(place, urls, { mcpServers: [server] })[0]
    expect(copilot?.path).toBe('/scratch/home/.copilot/mcp-config.json')
    expect(JSON.parse(copilot?.text ?? '{}').mcpServers.cachelab).toEqual({
      type: 'local',
      command: '/usr/bin/node',
      args: ['/scratch/home/mcp.mjs'],
      tools: ['*'],
    })
  })

  it('declare the switch model beside the default where the agent keeps a model list', () => {
    const opencode = AGENT_DRIVERS.opencode.files(place, urls, {})[0]?.text ?? ''
    expect(Object.keys(JSON.parse(opencode).provider.cachelab.models)).toEqual(['gpt-4.1', 'gpt-4.1-mini'])
    const kilo = AGENT_DRIVERS.kilo.files(place, urls, {})[0]
    expect(kilo?.path).toBe('/scratch/workspace/kilo.json')
    expect(JSON.parse(kilo?.text ?? '')).toMatchObject({
      enabled_providers: ['cachelab'],
      provider: { cachelab: { models: { 'gpt-4.1': {}, 'gpt-4.1-mini': {} } } },
    })
    const pi = AGENT_DRIVERS.pi.files(place, urls, {})[0]?.text ?? ''
    expect(JSON.parse(pi).providers.cachelab.models.map((model: { id: string }) => model.id)).toEqual([
      'claude-sonnet-4-6',
      'claude-haiku-4-5',
    ])
  })

  it('name a distinct memory file per agent family and a switch model other than the default', () => {
    const memory = Object.fromEntries(
      AGENT_NAMES.map((name) => [name, AGENT_DRIVERS[name].capabilities.memoryFile]),
    )
    expect(memory).toEqual({
      'claude-code': 'CLAUDE.md',
      codex: 'AGENTS.md',
      'gemini-cli': 'GEMINI.md',
      opencode: 'AGENTS.md',
      'qwen-code': 'QWEN.md',
      pi: 'AGENTS.md',
      copilot: 'AGENTS.md',
      cline: 'AGENTS.md',
      kilo: 'AGENTS.md',
    })
    for (const name of AGENT_NAMES)
      expect(AGENT_DRIVERS[name].capabilities.switchModel, name).not.toBe(AGENT_DRIVERS[name].defaultModel)
  })
})
