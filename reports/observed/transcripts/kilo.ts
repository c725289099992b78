// Kilo Code sessions: an opencode fork that keeps opencode's records (its database `kilo.db` under
// `$XDG_DATA_HOME/kilo/`, the same session, message and part tables and the same `step-finish` parts;
// `kilo export <id>` the same JSON), read by opencode's reader under Kilo's names: its config folder and
// files, which name the providers' packages. `kilo run` sends no title request: Kilo defers the title
// past the turn, and `run` exits first (notes/2026-12-08-kilo-code.md).

import { type OpencodeFlavor, opencodeFamilyReader } from './opencode.ts'
import type { TranscriptReader } from './types.ts'

export const KILO: OpencodeFlavor = {
  format: 'kilo',
  configFolder: 'kilo',
  // Kilo 7.7.7 reads opencode's names too; its own are put last here, so they win.
  globalConfigs: ['config.json', 'opencode.json', 'opencode.jsonc', 'kilo.json', 'kilo.jsonc'],
  projectConfigs: ['opencode.json', 'opencode.jsonc', 'kilo.json', 'kilo.jsonc'],
}

/** Read a Kilo Code database (every session in it) or one session's `kilo export` JSON. */
export const readKilo: TranscriptReader = opencodeFamilyReader(KILO)
