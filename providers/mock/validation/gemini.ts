// Gemini `generateContent`: what the API refuses before it runs a model — a role other than `user` and
// `model`, a function-call turn not answered by as many function responses, and a zero thinking budget on
// a model that only works in thinking mode. Wordings as the API answers them (notes/2026-11-30-gemini-wire.md).

import { geminiRejection } from '../../sim/gemini.ts'
import { asArray, asRecord, type Rule } from './shared.ts'

/** Every content's role is `user` or `model` (the prompt goes in `systemInstruction`, not a role). */
const knownRoles: Rule = ({ body }) => {
  for (const content of asArray(body.contents)) {
    const role = asRecord(content).role
    if (role !== undefined && role !== 'user' && role !== 'model')
      return geminiRejection(400, 'Please use a valid role: user, model.')
  }
  return undefined
}

const countParts = (content: unknown, key: string) =>
  asArray(asRecord(content).parts).filter((part) => asRecord(part)[key] !== undefined).length

/** A model turn's function calls are answered, in the next turn, by as many function responses. */
const responsesMatchCalls: Rule = ({ body }) => {
  const contents = asArray(body.contents)
  for (const [index, content] of contents.entries()) {
    const calls = countParts(content, 'functionCall')
    if (calls === 0) continue
    const next = contents[index + 1]
    if (next === undefined) continue
    if (countParts(next, 'functionResponse') !== calls) {
      return geminiRejection(
        400,
        'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
      )
    }
  }
  return undefined
}

/** A zero thinking budget turns thinking off only where the model allows it (2.5 Flash, not 2.5 Pro). */
const thinkingCanBeOff: Rule = ({ body, model }) => {
  const budget = asRecord(asRecord(body.generationConfig).thinkingConfig).thinkingBudget
  if (budget !== 0 || model.request.kind !== 'gemini' || model.request.thinkingCanBeOff) return undefined
  return geminiRejection(400, 'Budget 0 is invalid. This model only works in thinking mode.')
}

/** The rules of Gemini `generateContent`, in the order they are checked. */
export const GEMINI_RULES: readonly Rule[] = [knownRoles, responsesMatchCalls, thinkingCanBeOff]
