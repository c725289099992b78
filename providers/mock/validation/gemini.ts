// Gemini `generateContent`: what the API refuses before it runs a model — a role other than `user` and
// `model`, a function-call step not answered by as many function responses, a zero thinking budget on a
// model that only works in thinking mode, and, on Gemini 3, a current turn whose steps' first function
// calls came back without their thought signatures. Wordings as the API answers them
// (notes/2026-11-30-gemini-wire.md, notes/2026-12-01-gemini-thought-signatures.md).

import { geminiRejection } from '../../sim/gemini.ts'
import type { SimulatorRejection } from '../../sim/types.ts'
import { INT32_MAX } from './fields.ts'
import { asArray, asRecord, type Body, isSet, type Rule } from './shared.ts'

/** The proto package of the Gemini API's messages, as its parse errors name their types. */
const PROTO = 'type.googleapis.com/google.ai.generativelanguage.v1beta'

/**
 * A value the proto JSON parser cannot read as its field's type: "Invalid value at
 * 'tools[0].function_declarations[1]…type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type),
 * \"\"" is the API's verbatim form for an enum (agno-agi/agno#3298, zereight/gitlab-mcp#166); for scalar
 * fields the proto type name (`TYPE_STRING`, `TYPE_INT32`) stands in the parentheses, assumed. The field
 * path is the proto's (snake_case), the value as JSON.
 */
function invalidValue(path: string, protoType: string, value: unknown): SimulatorRejection {
  const shown = typeof value === 'number' ? String(value) : JSON.stringify(value)
  return geminiRejection(400, `Invalid value at '${path}' (${protoType}), ${shown}`)
}

/**
 * Every content's role is `user` or `model` (the prompt goes in `systemInstruction`, not a role): "Please
 * use a valid role: user, model." verbatim; a role that is not a string does not parse as one. Its
 * `parts` are a list (the parser's wording for a message where a list was due, assumed).
 */
const knownRoles: Rule = ({ body }) => {
  for (const [index, value] of asArray(body.contents).entries()) {
    const content = asRecord(value)
    const role = content.role
    if (role !== undefined && typeof role !== 'string')
      return invalidValue(`contents[${index}].role`, 'TYPE_STRING', role)
    if (role !== undefined && role !== 'user' && role !== 'model')
      return geminiRejection(400, 'Please use a valid role: user, model.')
    if (isSet(content.parts) && !Array.isArray(content.parts))
      return invalidValue(`contents[${index}].parts`, `${PROTO}.Part`, content.parts)
    const part = asArray(content.parts).findIndex((value) => !isMessage(value))
    if (part !== -1)
      return invalidValue(`contents[${index}].parts[${part}]`, `${PROTO}.Part`, asArray(content.parts)[part])
  }
  return undefined
}

/** A JSON value proto JSON reads as a message: an object. */
const isMessage = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * `systemInstruction` is a Content and `generationConfig` a GenerationConfig: a message, so a plain string
 * or number does not parse as one (the parser's wording, as for `parts`, assumed). Proto JSON takes both
 * field names.
 */
const messageFields: Rule = ({ body }) => {
  for (const [json, proto, type] of [
    ['systemInstruction', 'system_instruction', 'Content'],
    ['generationConfig', 'generation_config', 'GenerationConfig'],
  ] as const) {
    const value = body[json] ?? body[proto]
    if (isSet(value) && !isMessage(value)) return invalidValue(proto, `${PROTO}.${type}`, value)
  }
  return undefined
}

/**
 * A value outside a field's supported range, in the wording Vertex AI's Gemini endpoint gives ("Unable to
 * submit request because it has a temperature value of 3 but the supported range is from 0 (inclusive) to
 * 2.0001 (exclusive). Update the value and try again."); the Gemini API's own wording is not confirmed.
 */
function outOfRange(field: string, value: number, from: number, to: string): SimulatorRejection {
  return geminiRejection(
    400,
    `Unable to submit request because it has a ${field} value of ${value} but the supported range is from ${from} (inclusive) to ${to} (exclusive). Update the value and try again.`,
  )
}

/** The largest `maxOutputTokens` of the Gemini 2.5 and 3 models (65,536, models page). */
const MAX_OUTPUT_TOKENS = 65_536

/**
 * `generationConfig`: `maxOutputTokens` an int32 (proto JSON takes a number or a numeric string) in
 * 1–65,536, `temperature` in 0–2, `topP` in 0–1, `topK` an int32 (GenerationConfig reference). Proto JSON takes both the
 * JSON name and the proto name of a field.
 */
const generationConfigRanges: Rule = ({ body }) => {
  const config = asRecord(body.generationConfig ?? body.generation_config)
  const tokens = config.maxOutputTokens ?? config.max_output_tokens
  if (isSet(tokens)) {
    if (!isInt32(tokens)) return invalidValue('generation_config.max_output_tokens', 'TYPE_INT32', tokens)
    const count = Number(tokens)
    if (count < 1 || count > MAX_OUTPUT_TOKENS)
      return outOfRange('maxOutputTokens', count, 1, String(MAX_OUTPUT_TOKENS + 1))
  }
  for (const [field, proto, maximum] of [
    ['temperature', 'temperature', 2],
    ['topP', 'top_p', 1],
  ] as const) {
    const value = config[field] ?? config[proto]
    if (!isSet(value)) continue
    if (typeof value !== 'number') return invalidValue(`generation_config.${proto}`, 'TYPE_FLOAT', value)
    if (value < 0 || value > maximum) return outOfRange(field, value, 0, `${maximum}.0001`)
  }
  const topK = config.topK ?? config.top_k
  if (isSet(topK) && !isInt32(topK)) return invalidValue('generation_config.top_k', 'TYPE_INT32', topK)
  return undefined
}

/** An int32 as proto JSON reads one: an integer, or a string of one, within 32 bits. */
function isInt32(value: unknown): boolean {
  const count = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value
  return typeof count === 'number' && Number.isInteger(count) && Math.abs(count) <= INT32_MAX
}

const partsOf = (content: unknown): Body[] => asArray(asRecord(content).parts).map(asRecord)
const isModel = (content: unknown): boolean => asRecord(content).role === 'model'

/**
 * The model's steps: each run of consecutive `model` contents, as the index of each content. The SDK's
 * chat history keeps a streamed answer as one content per chunk, so one step may span several contents.
 */
function modelSteps(contents: readonly unknown[], from = 0): number[][] {
  const steps: number[][] = []
  let step: number[] | undefined
  for (let index = from; index < contents.length; index += 1) {
    if (!isModel(contents[index])) {
      step = undefined
      continue
    }
    if (step === undefined) {
      step = []
      steps.push(step)
    }
    step.push(index)
  }
  return steps
}

/** A model step's function calls are answered, in the next content, by as many function responses. */
const responsesMatchCalls: Rule = ({ body }) => {
  const contents = asArray(body.contents)
  for (const step of modelSteps(contents)) {
    const calls = step
      .flatMap((index) => partsOf(contents[index]))
      .filter((part) => part.functionCall !== undefined)
    const next = contents[(step.at(-1) ?? 0) + 1]
    if (calls.length === 0 || next === undefined) continue
    if (partsOf(next).filter((part) => part.functionResponse !== undefined).length !== calls.length) {
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

/** A part's thought signature: proto JSON takes the field's JSON name or its proto name. */
function thoughtSignatureOf(part: Body): string | undefined {
  const signature = part.thoughtSignature ?? part.thought_signature
  return typeof signature === 'string' && signature !== '' ? signature : undefined
}

/**
 * Where the current turn starts: the latest user content with standard content (any part that is not a
 * function response), or -1 when there is none. Its model steps follow it.
 */
function currentTurnStart(contents: readonly unknown[]): number {
  for (let index = contents.length - 1; index >= 0; index -= 1) {
    const content = asRecord(contents[index])
    if (content.role === 'model') continue
    if (partsOf(content).some((part) => part.functionResponse === undefined)) return index
  }
  return -1
}

/**
 * On a model that validates signatures (Gemini 3), the first function call of every model step of the
 * current turn carries its signature; earlier turns are not checked
 * (ai.google.dev/gemini-api/docs/thought-signatures, "Validation"). Any signature passes, the API's own or
 * one of the documented sentinels for calls it did not produce (`skip_thought_signature_validator`, which
 * Gemini CLI sends, and `context_engineering_is_the_way_to_go`): the mock cannot tell a real one from a
 * forged one. The wording is the Gemini API's, verbatim from issue threads (2026); the position is the
 * 1-based index of the model content in `contents`, which the reported positions are consistent with.
 */
const signedFunctionCalls: Rule = ({ body, model }) => {
  if (model.request.kind !== 'gemini' || model.request.thoughtSignatures !== 'validated') return undefined
  const contents = asArray(body.contents)
  for (const step of modelSteps(contents, currentTurnStart(contents) + 1)) {
    for (const index of step) {
      const call = partsOf(contents[index]).find((part) => part.functionCall !== undefined)
      if (call === undefined) continue
      if (thoughtSignatureOf(call) !== undefined) break
      const name = asRecord(call.functionCall).name
      return geminiRejection(
        400,
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${typeof name === 'string' ? name : ''}\` , position ${index + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      )
    }
  }
  return undefined
}

/** The rules of Gemini `generateContent`, in the order they are checked. */
export const GEMINI_RULES: readonly Rule[] = [
  messageFields,
  knownRoles,
  generationConfigRanges,
  responsesMatchCalls,
  thinkingCanBeOff,
  signedFunctionCalls,
]
