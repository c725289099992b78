// Bedrock Converse: what the service refuses before it runs a model — a role other than `user` and
// `assistant`, a conversation that does not open with a user message or does not alternate. Every
// refusal is a 400 ValidationException with a `{message}` body. The wordings are the service's as
// clients quote them (strands-agents/sdk-python and langchain-aws issue threads); they are kept here
// rather than asserted verbatim.

import { validationException } from '../../sim/linearize-bedrock.ts'
import { INT32_MAX, isInteger, type JsonKind, jsonKind } from './fields.ts'
import { asArray, asRecord, type Body, isSet, type Rule } from './shared.ts'

/** The kinds a Converse field takes, as its refusal names them. */
type ConverseKind = 'list' | 'structure' | 'string' | 'integer' | 'number'

const ARTICLE: Readonly<Record<ConverseKind, string>> = {
  list: 'a list',
  structure: 'a structure',
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
}

/** Whether a JSON value is of a Converse kind (an integer is an int32, as the Smithy model's `Integer`). */
function isKind(value: unknown, kind: ConverseKind): boolean {
  const actual: JsonKind = jsonKind(value)
  switch (kind) {
    case 'list':
      return actual === 'array'
    case 'structure':
      return actual === 'object'
    case 'string':
      return actual === 'string'
    case 'integer':
      return isInteger(value) && Math.abs(value as number) <= INT32_MAX
    case 'number':
      return typeof value === 'number'
  }
}

/**
 * A field of the wrong type: "The format of the value at <path> is invalid. Provide <a kind> for the field
 * and try again." The template is verbatim from the service's ValidationException for a tool schema that
 * is not a JSON object (aws/aws-sdk-net#3377, maximhq/bifrost#5762, paths 0-based and dotted); for the
 * other fields and kinds it is assumed.
 */
function wrongType(path: string, kind: ConverseKind) {
  return validationException(
    `The format of the value at ${path} is invalid. Provide ${ARTICLE[kind]} for the field and try again.`,
  )
}

/** The first field at or under `path` that is set and not of its kind; `fields` are checked in order. */
function checkFields(
  record: Body,
  path: string,
  fields: ReadonlyArray<readonly [string, ConverseKind]>,
): ReturnType<typeof wrongType> | undefined {
  for (const [name, kind] of fields) {
    const value = record[name]
    if (isSet(value) && !isKind(value, kind)) return wrongType(`${path}${name}`, kind)
  }
  return undefined
}

/** Each item of a list that must be a structure, checked with `inner`; the first refusal. */
function eachStructure(
  items: unknown,
  path: string,
  inner: (item: Body, path: string) => ReturnType<typeof wrongType> | undefined,
) {
  for (const [index, item] of asArray(items).entries()) {
    if (!isKind(item, 'structure')) return wrongType(`${path}.${index}`, 'structure')
    const refusal = inner(item as Body, `${path}.${index}.`)
    if (refusal !== undefined) return refusal
  }
  return undefined
}

/** Each item of a list that must be of `kind`; the first refusal. */
function eachOfKind(items: unknown, path: string, kind: ConverseKind) {
  const index = asArray(items).findIndex((item) => !isKind(item, kind))
  return index === -1 ? undefined : wrongType(`${path}.${index}`, kind)
}

/**
 * The types of what Converse reads: `messages` a list of structures with a `content` list of blocks (a block's `text` a string), `system` a list of blocks, `inferenceConfig` a structure
 * (`maxTokens` an int32, `temperature` and `topP` numbers, `stopSequences` a list of strings), `toolConfig`
 * a structure whose `tools` are structures (a `toolSpec` with a string `name`). A refusal is a 400
 * ValidationException naming the first field, in the order above. A role that is not a string is
 * `knownRoles`' (the enum constraint's refusal, as for an unknown role).
 */
export const fieldTypes: Rule = ({ body }) =>
  checkFields(body, '', [
    ['messages', 'list'],
    ['system', 'list'],
    ['inferenceConfig', 'structure'],
    ['toolConfig', 'structure'],
  ]) ??
  eachStructure(
    body.messages,
    'messages',
    (message, path) =>
      checkFields(message, path, [['content', 'list']]) ??
      eachStructure(message.content, `${path}content`, (block, blockPath) =>
        checkFields(block, blockPath, [['text', 'string']]),
      ),
  ) ??
  eachStructure(body.system, 'system', (block, path) => checkFields(block, path, [['text', 'string']])) ??
  checkFields(asRecord(body.inferenceConfig), 'inferenceConfig.', [
    ['maxTokens', 'integer'],
    ['temperature', 'number'],
    ['topP', 'number'],
    ['stopSequences', 'list'],
  ]) ??
  eachOfKind(asRecord(body.inferenceConfig).stopSequences, 'inferenceConfig.stopSequences', 'string') ??
  checkFields(asRecord(body.toolConfig), 'toolConfig.', [
    ['tools', 'list'],
    ['toolChoice', 'structure'],
  ]) ??
  eachStructure(
    asRecord(body.toolConfig).tools,
    'toolConfig.tools',
    (tool, path) =>
      checkFields(tool, path, [['toolSpec', 'structure']]) ??
      checkFields(asRecord(tool.toolSpec), `${path}toolSpec.`, [['name', 'string']]),
  )

/**
 * `inferenceConfig`: `maxTokens` ≥ 1, `temperature` and `topP` in 0–1 (InferenceConfiguration
 * reference). The service's constraint wording is verbatim for temperature ("1 validation error detected:
 * Value '1.5' at 'inferenceConfig.temperature' failed to satisfy constraint: Member must have value less
 * than or equal to 1", stdapi-ai/stdapi.ai#224); the other bounds follow the same template. A value of the
 * wrong type is `fieldTypes`'.
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
  fieldTypes,
  inferenceConfigRanges,
  knownRoles,
  startsWithUser,
  alternatesRoles,
]
