// The bare round trip the benchmarks hold cachelab's own cost against: a provider's adapter sends a
// request body through its SDK to an MSW handler that parses the body and answers a reply recorded once
// from the mock providers. Everything a simulated request costs but the simulation and the rows.

import { http } from 'msw'
import { type SetupServer, setupServer } from 'msw/node'
import type { LlmCall } from '../harness/ports.ts'
import type { ProviderId } from '../harness/types.ts'
import { adapterPort, createAdapter, simulatedEndpoint } from '../providers/index.ts'
import { MockContext } from '../providers/mock/context.ts'
import { mockHandlers } from '../providers/mock/handlers.ts'
import type { BuiltRequest, ProviderAdapter, ProviderReply } from '../providers/types.ts'
import { defaultBuild } from './run.ts'

interface RecordedReply {
  status: number
  headers: [string, string][]
  body: ArrayBuffer
}

/** A request as an adapter built it: its wire body and where its parts came from. */
export type BareRequest = Pick<BuiltRequest, 'body' | 'sources'>

/**
 * An MSW server in this thread that answers each provider's requests with the reply the mock providers
 * gave its first call (`prime`). One request at a time: the reply is the provider's of the request sent.
 */
export class BareRoundTrip {
  private readonly server: SetupServer
  private readonly replies = new Map<ProviderId, RecordedReply>()
  private readonly adapters = new Map<ProviderId, ProviderAdapter>()
  /** The provider whose request is being sent; undefined while a reply is recorded from the mock. */
  private answering: ProviderId | undefined
  private recorded: RecordedReply | undefined

  private constructor() {
    this.server = setupServer(
      http.post('*', async ({ request }) => {
        if (this.answering === undefined) return undefined
        JSON.parse(await request.text())
        const reply = this.replies.get(this.answering) as RecordedReply
        return new Response(reply.body.slice(0), { status: reply.status, headers: reply.headers })
      }),
      ...mockHandlers(new MockContext()),
    )
    this.server.events.on('response:mocked', async ({ response }) => {
      if (this.answering !== undefined) return
      this.recorded = {
        status: response.status,
        headers: [...response.headers.entries()],
        body: await response.clone().arrayBuffer(),
      }
    })
    this.server.listen({ onUnhandledRequest: 'error' })
  }

  static start(): BareRoundTrip {
    return new BareRoundTrip()
  }

  /** Whether `provider`'s reply is recorded. */
  primed(provider: ProviderId): boolean {
    return this.replies.has(provider)
  }

  /** Record the mock's reply to `call`: the bare handler answers `provider`'s requests with it from now on. */
  async prime(provider: ProviderId, call: LlmCall): Promise<void> {
    this.answering = undefined
    this.recorded = undefined
    const build = defaultBuild(provider, `bare.${provider}`, false)
    await adapterPort({ adapter: this.adapterOf(provider), build, mode: 'simulated' }).send(call)
    // The recording listener reads the body after the reply reached the SDK: let it finish.
    for (let waited = 0; this.recorded === undefined && waited < 50; waited += 1)
      await new Promise((resolve) => setTimeout(resolve, 10))
    // Set by the listener meanwhile (the compiler cannot see that).
    const recorded = this.recorded as RecordedReply | undefined
    if (recorded === undefined) throw new Error(`no reply recorded for ${provider}`)
    if (recorded.status !== 200)
      throw new Error(`the mock answered ${provider}'s call ${recorded.status}: prime with an answered call`)
    this.replies.set(provider, recorded)
  }

  /** Build `call`'s request as `provider`'s adapter does with the default build options. */
  build(provider: ProviderId, call: LlmCall): BareRequest {
    return this.adapterOf(provider).buildRequest(
      call.request,
      defaultBuild(provider, `bare.${provider}`, false),
    )
  }

  /**
   * Send one request through `provider`'s SDK to the bare handler (which must be primed for it); the reply
   * is the recorded one, whatever the body.
   */
  async send(provider: ProviderId, request: BareRequest): Promise<ProviderReply> {
    if (!this.replies.has(provider)) throw new Error(`the bare round trip is not primed for ${provider}`)
    const adapter = this.adapterOf(provider)
    this.answering = provider
    return adapter.send({ provider, api: adapter.api, ...request }, { stream: false, headers: {} })
  }

  close(): void {
    this.server.close()
  }

  private adapterOf(provider: ProviderId): ProviderAdapter {
    let adapter = this.adapters.get(provider)
    if (adapter === undefined) {
      adapter = createAdapter(provider, simulatedEndpoint(provider))
      this.adapters.set(provider, adapter)
    }
    return adapter
  }
}
