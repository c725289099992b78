// Bedrock Converse: what the service refuses before it runs a model — a role other than `user` and
// `assistant`, a conversation that does not open with a user message or does not alternate. Every
// refusal is a 400 ValidationException with a `{message}` body. The wordings are the service's as
// clients quote them (strands-agents/sdk-python and langchain-aws issue threads); they are kept here
// rather than asserted verbatim.

import { validationException } from '../../sim/linearize-bedrock.ts'
import { asArray, asRecord, type Rule } from './shared.ts'

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

export const BEDROCK_RULES: readonly Rule[] = [knownRoles, startsWithUser, alternatesRoles]
