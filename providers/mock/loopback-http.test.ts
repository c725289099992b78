import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import {
  deliver,
  errorResponse,
  fetchSameOrigin,
  readBody,
  textReader,
  watchDeparture,
  withoutEchoedKeys,
} from './loopback-http.ts'

/** A server on a free port whose requests `handle` answers; closed by the caller. */
async function listen(handle: (incoming: IncomingMessage, outgoing: ServerResponse) => void) {
  const server: Server = createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

describe("the loopback server's HTTP plumbing", () => {
  it('reads a body within its limit, and reads one past it to its end as too large', async () => {
    const bodies: Array<Buffer | 'too-large'> = []
    const server = await listen(async (incoming, outgoing) => {
      bodies.push(await readBody(incoming, 10))
      outgoing.end('ok')
    })
    try {
      for (const body of ['0123456789', '0123456789A', ''])
        expect(await (await fetch(server.url, { method: 'POST', body })).text()).toBe('ok')
      // Sent in pieces without a declared length, the limit is counted as it arrives.
      const chunked = new ReadableStream({
        start(controller) {
          for (const piece of ['01234', '56789', 'AB']) controller.enqueue(new TextEncoder().encode(piece))
          controller.close()
        },
      })
      await fetch(server.url, { method: 'POST', body: chunked, duplex: 'half' } as RequestInit)
    } finally {
      await server.close()
    }
    expect(bodies.map((body) => (body === 'too-large' ? body : body.toString()))).toEqual([
      '0123456789',
      'too-large',
      '',
      'too-large',
    ])
  })

  it('tells a frame sent, a client gone, and a client that stopped reading apart', async () => {
    const outcomes: string[] = []
    let finished!: () => void
    const done = new Promise<void>((resolve) => {
      finished = resolve
    })
    const server = await listen(async (_incoming, outgoing) => {
      const departure = watchDeparture(outgoing)
      outgoing.writeHead(200, { 'content-type': 'text/plain' })
      outcomes.push(await deliver(outgoing, Buffer.from('first'), departure, 5_000))
      // The client reads no further: frames pile up until one waits past the timeout.
      const big = Buffer.alloc(4 * 1024 * 1024, 120)
      let outcome = 'sent'
      while (outcome === 'sent') outcome = await deliver(outgoing, big, departure, 200)
      outcomes.push(outcome)
      // Once the connection closes, nothing more is sent.
      await new Promise<void>((resolve) => {
        if (departure.gone) resolve()
        else outgoing.once('close', () => resolve())
      })
      outcomes.push(await deliver(outgoing, Buffer.from('late'), departure, 5_000))
      finished()
    })
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1')
    try {
      socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n')
      await new Promise<void>((resolve) => socket.once('data', () => resolve()))
      socket.pause()
      while (outcomes.length < 2) await new Promise((resolve) => setTimeout(resolve, 20))
      socket.destroy()
      await done
    } finally {
      await server.close()
    }
    expect(outcomes).toEqual(['sent', 'stalled', 'closed'])
  })

  it('reads a text as one frame, or none when it is empty', async () => {
    const frames = async (text: string) => {
      const reader = textReader(text)
      const read: string[] = []
      for (let next = await reader.read(); !next.done; next = await reader.read())
        read.push(Buffer.from(next.value).toString())
      return read
    }
    expect(await frames('héllo')).toEqual(['héllo'])
    expect(await frames('')).toEqual([])
    const cancelled = textReader('x')
    await cancelled.cancel()
    expect((await cancelled.read()).done).toBe(true)
  })

  it("answers errors in the vendor's envelope, and redacts an echoed key from a refusal", async () => {
    const anthropic = errorResponse('anthropic', 529, 'Overloaded')
    expect(anthropic.status).toBe(529)
    expect(await anthropic.json()).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    })
    const bedrock = errorResponse('bedrock', 429, 'Slow down')
    expect(bedrock.headers.get('x-amzn-errortype')).toMatch(/^ThrottlingException:/)
    const refusal = new Response('{"error":{"message":"Incorrect API key provided: sk-caller-0123456789"}}', {
      status: 401,
      headers: { 'x-request-id': 'req_1' },
    })
    const clean = await withoutEchoedKeys(refusal, ['sk-caller-0123456789'])
    expect(clean.status).toBe(401)
    expect(clean.headers.get('x-request-id')).toBe('req_1')
    expect(await clean.text()).toBe('{"error":{"message":"Incorrect API key provided: [redacted]"}}')
  })

  it("follows a 307 or 308 within the provider's origin only", async () => {
    const elsewhere = await listen((_incoming, outgoing) => outgoing.end('elsewhere'))
    const seen: string[] = []
    const provider = await listen((incoming, outgoing) => {
      seen.push(`${incoming.method} ${incoming.url} ${incoming.headers.authorization}`)
      incoming.resume()
      const redirect = (status: number, location: string) => {
        outgoing.writeHead(status, { location })
        outgoing.end()
      }
      if (incoming.url === '/moved') redirect(308, '/v1/answer')
      else if (incoming.url === '/away') redirect(307, `${elsewhere.url}/steal`)
      else if (incoming.url === '/found') redirect(302, '/v1/answer')
      else if (incoming.url === '/loop') redirect(307, '/loop')
      else outgoing.end('answered')
    })
    const init = { method: 'POST', body: '{}', headers: { authorization: 'Bearer key' } }
    try {
      const moved = await fetchSameOrigin(`${provider.url}/moved`, init)
      expect([moved.status, await moved.text()]).toEqual([200, 'answered'])
      expect((await fetchSameOrigin(`${provider.url}/away`, init)).status).toBe(307)
      expect((await fetchSameOrigin(`${provider.url}/found`, init)).status).toBe(302)
      expect((await fetchSameOrigin(`${provider.url}/loop`, init)).status).toBe(307)
    } finally {
      await provider.close()
      await elsewhere.close()
    }
    expect(seen.slice(0, 2)).toEqual(['POST /moved Bearer key', 'POST /v1/answer Bearer key'])
    // The loop stops after five hops: six requests to /loop.
    expect(seen.filter((line) => line.startsWith('POST /loop'))).toHaveLength(6)
    expect(seen.some((line) => line.includes('/steal'))).toBe(false)
  })
})
