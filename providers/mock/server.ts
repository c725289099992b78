// In-process mock providers: the MSW handlers on a node interceptor, so the official SDKs' fetch calls
// to the real API hosts are answered by the simulators. Unhandled requests are errors: nothing reaches
// a real API by accident.

import { type SetupServer, setupServer } from 'msw/node'
import { MockContext, type MockContextOptions } from './context.ts'
import { mockHandlers } from './handlers.ts'

export interface MockProviders {
  context: MockContext
  close(): void
}

/** Start intercepting the real provider hosts. Call `close` when done. */
export function startMockProviders(options: MockContextOptions = {}): MockProviders {
  const context = new MockContext(options)
  const server = setupServer(...mockHandlers(context))
  server.listen({ onUnhandledRequest: 'error' })
  releaseResponseClones(server)
  return { context, close: () => server.close() }
}

/**
 * Let a client cancel the body of a mocked response. MSW's interceptor (@mswjs/interceptors 0.41) tees
 * every mocked response for its `response:mocked` event and nobody reads that copy, so cancelling the
 * body the client got never settles (mswjs/interceptors#799) — and the official SDKs cancel an error
 * body before they retry, so a retried 429 hung. Cancelling the event's copy lets the client's cancel
 * settle; the client's own body is untouched.
 */
export function releaseResponseClones(server: Pick<SetupServer, 'events'>): void {
  server.events.on('response:mocked', ({ response }) => {
    response.body?.cancel().catch(() => undefined)
  })
}
