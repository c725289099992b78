// A session uploads a screenshot every turn. Past the image limit the oldest images are offloaded: one
// at a time (an early message changes on every upload) or in quanta (it changes once per quantum).

import { syntheticImage } from '../harness/png.ts'
import type { TurnScript } from '../harness/script.ts'
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
}
