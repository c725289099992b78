// The official SDKs the adapters send through. They are optional peers of cachelab (a project installs
// the ones its providers need), so each is imported when an adapter first sends, and a missing one is a
// usage error naming it and the version to install (notes/2026-12-02-optional-peers.md).

import { CachelabError } from '../harness/errors.ts'
import { importPeer, listNames, missingPeers, type PeerImporter } from '../harness/peers.ts'
import type { ProviderId } from '../harness/types.ts'

/** The SDK modules by package name, as the adapters use them. */
export interface ProviderSdkModules {
  openai: typeof import('openai')
  '@anthropic-ai/sdk': typeof import('@anthropic-ai/sdk')
  '@google/genai': typeof import('@google/genai')
  '@aws-sdk/client-bedrock-runtime': typeof import('@aws-sdk/client-bedrock-runtime')
}

/** An official SDK an adapter sends through. */
export type ProviderSdk = keyof ProviderSdkModules

/** The SDK a provider's adapter sends through: compatible providers speak Chat Completions over openai. */
export function sdkOf(provider: ProviderId): ProviderSdk {
  switch (provider) {
    case 'anthropic':
      return '@anthropic-ai/sdk'
    case 'gemini':
      return '@google/genai'
    case 'bedrock':
      return '@aws-sdk/client-bedrock-runtime'
    default:
      return 'openai'
  }
}

/** The SDKs of some providers, each once, in the order the providers name them. */
export function sdksOf(providers: readonly ProviderId[]): ProviderSdk[] {
  return [...new Set(providers.map(sdkOf))]
}

const loading = new Map<ProviderSdk, Promise<unknown>>()

/** What an adapter says when its SDK is missing at the first send (no command checked it first). */
const sendPurpose = (sdk: ProviderSdk) => `cachelab sends requests through the ${sdk} SDK`

/**
 * The module of one SDK, imported once per process. A missing SDK is a usage error naming it; the
 * failure is not kept, so a later call tries again.
 */
export function loadSdk<Name extends ProviderSdk>(name: Name): Promise<ProviderSdkModules[Name]> {
  let module = loading.get(name)
  if (module === undefined) {
    module = importPeer<ProviderSdkModules[Name]>(name, sendPurpose(name))
    module.catch(() => loading.delete(name))
    loading.set(name, module)
  }
  return module as Promise<ProviderSdkModules[Name]>
}

/**
 * Check that every SDK some providers send through is installed, before anything runs: the missing ones
 * are one usage error, `<purpose> the openai SDK: npm i -D openai@6.49.0`.
 */
export async function requireSdks(
  providers: readonly ProviderId[],
  purpose: string,
  importer?: PeerImporter,
): Promise<void> {
  const missing: ProviderSdk[] = []
  for (const sdk of sdksOf(providers)) {
    try {
      if (importer === undefined) await loadSdk(sdk)
      else await importPeer(sdk, sendPurpose(sdk), importer)
    } catch (error) {
      if (!(error instanceof CachelabError && error.kind === 'usage')) throw error
      missing.push(sdk)
    }
  }
  if (missing.length === 0) return
  const sdks = missing.length === 1 ? 'SDK' : 'SDKs'
  throw missingPeers(`${purpose} the ${listNames(missing)} ${sdks}`, missing)
}

/** A client made on first use: the adapters build theirs when they first send, after their SDK loads. */
export function lazy<Value>(make: () => Promise<Value>): () => Promise<Value> {
  let made: Promise<Value> | undefined
  return () => {
    if (made === undefined) {
      const making = make()
      made = making
      making.catch(() => {
        made = undefined
      })
    }
    return made
  }
}
