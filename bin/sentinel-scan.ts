// Where a secret leaked: every file under some paths, and some captured texts (a process's output),
// searched for sentinel strings. The keyed loopback run and the serve security tests use it to prove that
// no key reaches anything cachelab writes.

import { lstatSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** Each place a sentinel was found, as `where: sentinel`; empty when none leaked. */
export function findSentinels(
  paths: readonly string[],
  texts: Readonly<Record<string, string>>,
  sentinels: readonly string[],
): string[] {
  const found: string[] = []
  const search = (where: string, text: string) => {
    for (const sentinel of sentinels) if (text.includes(sentinel)) found.push(`${where}: ${sentinel}`)
  }
  const walk = (path: string) => {
    const stats = lstatSync(path)
    if (stats.isDirectory()) for (const name of readdirSync(path).sort()) walk(join(path, name))
    else if (stats.isFile()) search(path, readFileSync(path, 'latin1'))
  }
  for (const path of paths) walk(path)
  for (const [where, text] of Object.entries(texts)) search(where, text)
  return found
}

/** Requests that put `key` where a key can hide besides the headers: query strings and odd paths. */
export function keyInQueryRequests(baseURLs: { openai: string; anthropic: string }, key: string): Request[] {
  const body = JSON.stringify({ model: 'gpt-5.4', messages: [{ role: 'user', content: 'hello' }] })
  const post = (url: string) =>
    new Request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${key}`,
        cookie: `session=${key}`,
      },
      body,
    })
  // Keys a client (or an SDK's passthrough options) put in the body: an unknown field, extra headers, a
  // key-shaped conversation key, an Anthropic user id.
  const inBody = (url: string, fields: Record<string, unknown>) =>
    new Request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ ...(JSON.parse(body) as object), ...fields }),
    })
  return [
    inBody(`${baseURLs.openai}/chat/completions`, {
      api_key: key,
      extra_headers: { Authorization: `Bearer ${key}` },
      prompt_cache_key: `sk-${key}`,
    }),
    inBody(`${baseURLs.anthropic}/v1/messages`, {
      model: 'claude-sonnet-4-6',
      max_tokens: 16,
      metadata: { user_id: `sk-ant-${key}` },
    }),
    post(`${baseURLs.openai}/chat/completions?key=${key}`),
    post(`${baseURLs.openai}/chat/completions?api-key=${key}&api_key=${key}`),
    post(`${baseURLs.openai}/chat/completions?access_token=${encodeURIComponent(key)}&x-goog-api-key=${key}`),
    post(`${baseURLs.openai}/no-such-endpoint?key=${key}`),
    new Request(`${baseURLs.anthropic}/v1/models?api_key=${key}`, { headers: { 'x-api-key': key } }),
  ]
}
