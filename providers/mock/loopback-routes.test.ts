import { http } from 'msw'
import { describe, expect, it } from 'vitest'
import {
  acceptedPrefixes,
  apiRoot,
  LOOPBACK_ROUTES,
  loopbackPrefix,
  loopbackRoutes,
  routeOf,
  servedUnder,
  underRoot,
} from './loopback-routes.ts'

const bases = {
  openai: 'https://api.openai.test/v1',
  anthropic: 'https://api.anthropic.test/',
  deepseek: 'https://api.deepseek.test',
  bedrock: 'https://bedrock.test',
  gemini: 'https://gemini.test',
}

describe('where the loopback server answers', () => {
  it("takes a path's longest prefix, and keeps the query in the rest", () => {
    expect(routeOf('/anthropic/v1/messages?beta=true')).toEqual({
      vendor: 'anthropic',
      rest: '/messages?beta=true',
    })
    expect(routeOf('/anthropic/messages')).toEqual({ vendor: 'anthropic', rest: '/messages' })
    expect(routeOf('/deepseek/v1/chat/completions')).toEqual({
      vendor: 'deepseek',
      rest: '/chat/completions',
    })
    expect(routeOf('/openai/v1/responses')).toEqual({ vendor: 'openai', rest: '/responses' })
    // OpenAI has no unversioned paths, and a prefix alone is no path under it.
    expect(routeOf('/openai/chat/completions')).toBeUndefined()
    expect(routeOf('/gemini')).toBeUndefined()
    expect(routeOf('/elsewhere/v1/messages')).toBeUndefined()
  })

  it('lists the built-in routes first, longest before shorter, then each compatible provider', () => {
    const routes = loopbackRoutes()
    expect(routes.slice(0, LOOPBACK_ROUTES.length)).toEqual(LOOPBACK_ROUTES)
    expect(routes).toBe(loopbackRoutes())
    for (const [index, route] of routes.entries())
      for (const later of routes.slice(index + 1))
        expect(later.prefix.startsWith(`${route.prefix}/`), `${later.prefix} after ${route.prefix}`).toBe(
          false,
        )
    expect(acceptedPrefixes()).toMatch(
      /^cachelab serve answers under \/anthropic\/v1, \/anthropic, \/openai\/v1, /,
    )
  })

  it("gives each vendor its SDK's base path and API root", () => {
    expect(loopbackPrefix('openai')).toBe('/openai/v1')
    expect(loopbackPrefix('anthropic')).toBe('/anthropic')
    // Anthropic's SDK appends /v1 itself, so its root has it; the others' base URLs are their roots.
    expect(apiRoot('anthropic', bases)).toBe('https://api.anthropic.test/v1')
    expect(apiRoot('openai', bases)).toBe('https://api.openai.test/v1')
    expect(apiRoot('deepseek', bases)).toBe('https://api.deepseek.test')
  })

  it("offers a request only the handlers under its vendor's root, and names what they serve", () => {
    const handlers = [
      http.post('https://api.deepseek.test/chat/completions', () => undefined),
      http.post('https://api.deepseek.test/v1/chat/completions', () => undefined),
      http.get('https://api.deepseek.test/models', () => undefined),
      http.post('https://api.openai.test/v1/responses', () => undefined),
      http.post(/anything/, () => undefined),
    ]
    const under = underRoot(handlers, 'https://api.deepseek.test')
    expect(under.map(({ info }) => String(info.path))).toEqual([
      'https://api.deepseek.test/chat/completions',
      'https://api.deepseek.test/v1/chat/completions',
      'https://api.deepseek.test/models',
      '/anything/',
    ])
    // The 404's list reads the default roots: DeepSeek's /v1 alias listed once, parameters in braces.
    const served = [
      http.post('https://api.deepseek.com/chat/completions', () => undefined),
      http.post('https://api.deepseek.com/v1/chat/completions', () => undefined),
      http.get('https://api.deepseek.com/models/:model', () => undefined),
      http.post('https://api.openai.com/v1/responses', () => undefined),
    ]
    expect(servedUnder('deepseek', served)).toBe(
      'under /deepseek/v1 and /deepseek the simulator serves POST /chat/completions, GET /models/{model}',
    )
  })
})
