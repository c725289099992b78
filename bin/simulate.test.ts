import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { simulateLines, simulateStream } from './simulate-command.ts'

const testdata = (name: string) =>
  readFileSync(new URL(`../providers/sim/testdata/${name}`, import.meta.url), 'utf8')
const reads = (lines: string[]) => lines.map((line) => JSON.parse(line).usage.cacheRead)

describe('cachelab simulate reproduces the providers’ documented examples', () => {
  it('OpenAI: a repeated 2,006-token prompt reads 1,920', () => {
    const lines = simulateLines(testdata('openai-2006.jsonl'), 'openai-2006.jsonl', 'openai-chat')
    expect(reads(lines)).toEqual([0, 1920])
    expect(JSON.parse(lines[1] as string).raw).toMatchObject({
      prompt_tokens: 2006,
      prompt_tokens_details: { cached_tokens: 1920 },
    })
  })

  it('Anthropic: 10 → 15 → 35 blocks; the third request misses: block 15 is outside the 20-block window', () => {
    const lines = simulateLines(testdata('anthropic-lookback.jsonl'), 'anthropic-lookback.jsonl', 'anthropic')
    const [first, second, third] = lines.map((line) => JSON.parse(line).raw)
    expect(first.cache_read_input_tokens).toBe(0)
    expect(first.cache_creation_input_tokens).toBeGreaterThan(1024)
    expect(second.cache_read_input_tokens).toBe(first.cache_creation_input_tokens)
    expect(third.cache_read_input_tokens).toBe(0)
  })

  it('Anthropic: a second breakpoint at block 15 finds the entry the second request wrote', () => {
    const lines = simulateLines(
      testdata('anthropic-lookback-second-breakpoint.jsonl'),
      'x.jsonl',
      'anthropic',
    )
    const [, second, third] = lines.map((line) => JSON.parse(line).raw)
    expect(third.cache_read_input_tokens).toBe(
      second.cache_read_input_tokens + second.cache_creation_input_tokens,
    )
  })

  it("DeepSeek: A+B, then A+C misses, then A+D hits the common prefix A persisted by the second request, read on the V4 models' 128-token grid", () => {
    const lines = simulateLines(testdata('deepseek-units.jsonl'), 'deepseek-units.jsonl', 'deepseek')
    const [first, second, third] = lines.map((line) => JSON.parse(line))
    expect(first.raw.prompt_cache_hit_tokens).toBe(0)
    expect(second.raw.prompt_cache_hit_tokens).toBe(0)
    expect(third.raw.prompt_cache_hit_tokens).toBeGreaterThan(2900)
    expect(third.raw.prompt_cache_hit_tokens % 128).toBe(0)
    expect(third.raw.prompt_cache_hit_tokens + third.raw.prompt_cache_miss_tokens).toBe(
      third.raw.prompt_tokens,
    )
  })

  it('OpenAI GPT-5.6: a loop marking every user turn answers usage; its fourth request (three earlier markers, one new) reads the third', () => {
    const lines = simulateLines(
      testdata('openai-breakpoints.jsonl'),
      'openai-breakpoints.jsonl',
      'openai-chat',
    )
    const answers = lines.map((line) => JSON.parse(line))
    expect(answers).toHaveLength(4)
    for (const answer of answers) expect(answer).not.toHaveProperty('error')
    const usage = answers.map((answer) => answer.usage)
    for (let index = 1; index < usage.length; index += 1) {
      expect(usage[index].cacheRead).toBe(usage[index - 1].cacheRead + usage[index - 1].cacheWrite)
    }
    expect(answers[3].raw.prompt_tokens_details).toMatchObject({
      cached_tokens: usage[2].cacheRead + usage[2].cacheWrite,
      cache_write_tokens: usage[3].cacheWrite,
    })
  })

  it("OpenAI GPT-5.6: answers an error line for a marker on assistant output, in OpenAI's error shape", () => {
    const body = JSON.stringify({
      model: 'gpt-5.6-sol',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'hello', prompt_cache_breakpoint: { mode: 'explicit' } }],
        },
      ],
    })
    const [line] = simulateLines(body, 'in', 'openai-responses')
    expect(JSON.parse(line as string).error).toMatchObject({
      status: 400,
      body: {
        error: { type: 'invalid_request_error', param: 'input[1].content[0].prompt_cache_breakpoint' },
      },
    })
  })

  it('takes bare bodies, fills a missing model from --model, and names the line of bad input', () => {
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })
    expect(simulateLines(`${body}\n`, 'in', 'openai-chat', 'gpt-5.4')).toHaveLength(1)
    expect(() => simulateLines(`${body}\n{nope\n`, 'in', 'openai-chat', 'gpt-5.4')).toThrow(
      'in:2: not valid JSON',
    )
    expect(() => simulateLines(`${body}\n`, 'in', 'openai-chat')).toThrow(/in:1: the body has no model/)
  })

  it('answers a request the provider would reject with its error', () => {
    const content = Array.from({ length: 5 }, (_, index) => ({
      type: 'text',
      text: `b${index}`,
      cache_control: { type: 'ephemeral' },
    }))
    const body = JSON.stringify({
      model: 'claude-sonnet-4-6',
      max_tokens: 8,
      messages: [{ role: 'user', content }],
    })
    const [line] = simulateLines(body, 'in', 'anthropic')
    expect(JSON.parse(line as string).error).toMatchObject({ status: 400 })
  })

  it('answers an error line for a system message inside messages on claude-sonnet-4-6, usage on claude-opus-4-8', () => {
    const body = (model: string) =>
      JSON.stringify({
        model,
        max_tokens: 8,
        system: 'You are a coding agent.',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
          { role: 'system', content: 'Build mode is on.' },
          { role: 'user', content: 'go on' },
        ],
      })
    const [refused, accepted] = simulateLines(
      `${body('claude-sonnet-4-6')}\n${body('claude-opus-4-8')}\n`,
      'in',
      'anthropic',
    ).map((line) => JSON.parse(line))
    expect(refused).toEqual({
      error: {
        status: 400,
        body: {
          type: 'error',
          error: { type: 'invalid_request_error', message: "role 'system' is not supported on this model" },
        },
      },
    })
    expect(accepted.usage.input).toBeGreaterThan(0)
  })
})

describe('cachelab simulate streams', () => {
  it('writes each line’s usage before it reads the next line, with the same numbers as a whole file', async () => {
    const text = testdata('openai-2006.jsonl')
    const inputLines = text.split('\n')
    const events: string[] = []
    async function* lines() {
      for (const [index, line] of inputLines.entries()) {
        events.push(`read ${index + 1}`)
        yield line
      }
    }
    const written: string[] = []
    const count = await simulateStream(lines(), 'openai-2006.jsonl', 'openai-chat', (line) => {
      events.push(`wrote ${written.length + 1}`)
      written.push(line)
    })
    expect(count).toBe(2)
    expect(events.slice(0, 3)).toEqual(['read 1', 'wrote 1', 'read 2'])
    expect(written).toEqual(simulateLines(text, 'openai-2006.jsonl', 'openai-chat'))
  })

  it('names the line of a malformed input after writing the ones before it', async () => {
    const written: string[] = []
    const body = JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'Hi.' }] })
    await expect(
      simulateStream([body, '', '{nope'], 'in', 'openai-chat', (line) => {
        written.push(line)
      }),
    ).rejects.toThrow(/in:3: not valid JSON/)
    expect(written).toHaveLength(1)
  })
})
