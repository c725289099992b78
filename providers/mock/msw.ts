// The mock providers for a user's own MSW setup (the `cachelab/msw` entry point): the handlers that answer
// the official SDKs' requests to the real API hosts from the cache simulators, the context they share,
// and a ready in-process server.

export { type MockCall, MockContext, type MockContextOptions } from './context.ts'
export { mockHandlers } from './handlers.ts'
export { type MockProviders, startMockProviders } from './server.ts'
