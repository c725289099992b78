// A session uploads a screenshot every turn. Past the image limit the oldest images are offloaded: one
// at a time (an early message changes on every upload) or in quanta (it changes once per quantum).

import { syntheticImage } from '../harness/png.ts'
import type { TurnScript } from '../harness/script.ts'
import { breaksWith, lostTokens, tokensText } from './claims.ts'
import { agentSystemPrompt, CODING_TOOLS } from './fixtures.ts'
import type { Scenario } from './types.ts'

const turns: TurnScript[] = Array.from({ length: 18 }, (_, index) => ({
  kind: 'turn',
  user: [
    { type: 'text', text: `Screenshot ${index + 1}: does the layout still match the design?` },
    syntheticImage(`screen-${index + 1}`, 1024, 768),
  ],
  steps: [{ text: { tokens: 60, seed: `image:${index}` } }],
}))

export const imageOffload: Scenario = {
  name: 'image-offload',
  demonstrates:
    'Offloading images in quanta keeps the prefix stable between quanta; offloading one per request breaks it on every upload.',
  variants: [
    { name: 'quantized', policies: { imageOffload: 'quantized', imageLimit: 8, imageQuantum: 4 } },
    { name: 'per-request', policies: { imageOffload: 'per-request', imageLimit: 8 } },
  ],
  system: agentSystemPrompt(3000, 'images'),
  tools: CODING_TOOLS,
  maxTokens: 1024,
  script: turns,
  claims: [
    {
      id: 'quanta-break-less',
      text: 'Offloading images in quanta breaks less often and loses fewer tokens than offloading one per request.',
      variants: ['quantized', 'per-request'],
      check(rows) {
        const quantized = breaksWith(rows('quantized'), 'image-offload').length
        const single = breaksWith(rows('per-request'), 'image-offload').length
        return {
          holds: quantized < single && lostTokens(rows('quantized')) < lostTokens(rows('per-request')),
          observed: `image-offload breaks: quantized ${quantized} (${tokensText(lostTokens(rows('quantized')))}), per-request ${single} (${tokensText(lostTokens(rows('per-request')))})`,
        }
      },
    },
  ],
}
