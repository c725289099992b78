// Test helpers for the OpenTelemetry export: an OTLP/HTTP receiver on loopback that records what it is
// sent, an endpoint nothing listens on, and a received request's spans flattened for assertions.

import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { OtlpTraceRequest } from '../reports/otel.ts'

/** What a test OTLP/HTTP receiver was sent. */
interface Received {
  method: string
  path: string
  contentType: string
  authorization: string | undefined
  body: OtlpTraceRequest
}

/** An OTLP/HTTP receiver on a free loopback port: answers `POST /v1/traces` with `status`, records each request. */
export async function startReceiver(
  status = 200,
): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({
        method: request.method ?? '',
        path: request.url ?? '',
        contentType: request.headers['content-type'] ?? '',
        authorization: request.headers.authorization,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpTraceRequest,
      })
      const ok = request.method === 'POST' && request.url === '/v1/traces' && status === 200
      response.writeHead(ok ? 200 : status === 200 ? 404 : status, { 'content-type': 'application/json' })
      response.end(ok ? '{}' : '{"error":"refused by the test receiver"}')
    })
  })
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((closed) => server.close(() => closed())),
  }
}

/** A URL nothing listens on: a port the system gave out and took back. */
export async function deadEndpoint(): Promise<string> {
  const receiver = await startReceiver()
  await receiver.close()
  return receiver.url
}

/** Spans of a received request, flattened, with attributes as key → value. */
export function receivedSpans(body: OtlpTraceRequest) {
  return body.resourceSpans.flatMap((resource) =>
    resource.scopeSpans.flatMap((scope) =>
      scope.spans.map((span) => ({
        ...span,
        values: Object.fromEntries(
          span.attributes.map(({ key, value }) => [key, Object.values(value)[0] as unknown]),
        ),
      })),
    ),
  )
}
