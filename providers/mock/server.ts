// In-process mock providers: the MSW handlers on a node interceptor, so the official SDKs' fetch calls
// to the real API hosts are answered by the simulators. Unhandled requests are errors: nothing reaches
// a real API by accident.

import { setupServer } from 'msw/node'
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
  return { context, close: () => server.close() }
}
