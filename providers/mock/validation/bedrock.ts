// Bedrock Converse: what the service refuses before it runs a model — a role other than `user` and
// `assistant`, a conversation that does not open with a user message or does not alternate. Every
// refusal is a 400 ValidationException with a `{message}` body. The wordings are the service's as
// clients quote them (strands-agents/sdk-python and langchain-aws issue threads); they are kept here
// rather than asserted verbatim.

import { validationException } from '../../sim/linearize-bedrock.ts'
import { asArray, asRecord, isSet, type Rule } from './shared.ts'

/**
 * `inferenceConfig`: `maxTokens` ≥ 1, `temperature` and `topP` in 0–1 (InferenceConfiguration
 * reference). The service's constraint wording is verbatim for temperature ("1 validation error detected:
 * Value '1.5' at 'inferenceConfig.temperature' failed to satisfy constraint: Member must have value less
 * than or equal to 1", stdapi-ai/stdapi.ai#224); the other bounds follow the same template. A value of the
 * wrong type is a SerializationException the mock does not model.
 */
export const inferenceConfigRanges: Rule = ({ body }) => {
  const config = asRecord(body.inferenceConfig)
  const bounds = [
    ['maxTokens', 1, undefined],
    ['temperature', 0, 1],
    ['topP', 0, 1],
  ] as const
  for (const [field, minimum, maximum] of bounds) {
    const value = config[field]
    if (!isSet(value) || typeof value !== 'number') continue
    const broken =
      value < minimum
        ? `greater than or equal to ${minimum}`
        : maximum !== undefined && value > maximum
          ? `less than or equal to ${maximum}`
          : undefined
    if (broken !== undefined)
      return validationException(
        `1 validation error detected: Value '${value}' at 'inferenceConfig.${field}' failed to satisfy constraint: Member must have value ${broken}`,
      )
  }
  return undefined
}

/** Roles the Converse API takes (ConversationRole). */
const ROLES = ['user', 'assistant']

export const knownRoles: Rule = ({ body }) => {
  for (const [index, value] of asArray(body.messages).entries()) {
    const role = asRecord(value).role
    if (typeof role !== 'string' || !ROLES.includes(role))
      return validationException(
        `1 validation error detected: Value '${String(role)}' at 'messages.${index + 1}.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]`,
      )
  }
  return undefined
}

export const startsWithUser: Rule = ({ body }) => {
  const first = asRecord(asArray(body.messages)[0])
  return first.role === 'user'
    ? undefined
    : validationException(
        'A conversation must start with a user message. Try again with a conversation that starts with a user message.',
      )
}

export const alternatesRoles: Rule = ({ body }) => {
  const messages = asArray(body.messages)
  for (let index = 1; index < messages.length; index += 1) {
    if (asRecord(messages[index]).role === asRecord(messages[index - 1]).role)
      return validationException(
        'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.',
      )
  }
  return undefined
}

export const BEDROCK_RULES: readonly Rule[] = [
  inferenceConfigRanges,
  knownRoles,
  startsWithUser,
  alternatesRoles,
]
