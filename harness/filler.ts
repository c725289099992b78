// Deterministic filler text of an exact o200k_base token count: scenario tool results, prompts and
// documents of a given size without tokenizing to find the size. Each vocabulary word with its leading
// space is one token, and so is each full stop; a seed picks the words.

import { seededRandom } from './random.ts'

const VOCABULARY = (
  'the of and to in is for on that with as by this are be from or at an it not which have has was will can all ' +
  'but one more were their also other new when there about your any some been would these what its into only ' +
  'time may than them then most such file code test data line value function return error module build tool ' +
  'result read write call state cache prefix token request session step turn model provider system prompt ' +
  'message user agent loop event log report run check path name type field list table index block node tree ' +
  'hash key store order change update series header route slot history summary output input stream chunk usage ' +
  'price cost ratio break cause window limit size count range start end first last next previous stable fresh ' +
  'clean simple small large long short fast slow open close plan task issue note design rule source branch ' +
  'commit merge patch diff review team work project library package version release config option default ' +
  'flag mode level group class object array string number method server client network query page view form ' +
  'button image text document record entry item set map queue stack graph point edge vertex layer frame scene ' +
  'shape color sound space world river mountain forest garden chair light water stone paper letter story music ' +
  'green blue red yellow black white great early late quiet strong gentle bright dark warm cold'
).split(' ')

/** Text of exactly `tokens` o200k_base tokens, the same for the same seed. */
export function fillerText(tokens: number, seed: string | number = 0): string {
  const random = seededRandom(typeof seed === 'number' ? seed : hashSeed(seed))
  const parts: string[] = []
  for (let index = 0; index < tokens; index += 1) {
    if (index % 14 === 13) {
      parts.push('.')
      continue
    }
    parts.push(` ${VOCABULARY[Math.floor(random.next() * VOCABULARY.length)] ?? 'the'}`)
  }
  return parts.join('')
}

function hashSeed(seed: string): number {
  let hash = 0
  for (let index = 0; index < seed.length; index += 1)
    hash = (Math.imul(hash, 31) + seed.charCodeAt(index)) >>> 0
  return hash
}
