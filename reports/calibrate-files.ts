// The sources `cachelab calibrate` reads, into the packed requests the calibration compares:
// transcripts (the DeepSeek requests replayed through the simulator for their unit placements), keyed
// runs' steps.csv and live captures (each with the prediction made when it was sent).

import { CachelabError } from '../harness/errors.ts'
import type { ProviderId } from '../harness/types.ts'
import { type ModelEntry, simulationModel, vendorOf } from '../providers/catalog.ts'
import { type CalibrationInput, calibrate, type ModelCalibration } from './calibrate.ts'
import { CalibrationRequests } from './calibrate-requests.ts'
import { captureUsage, keyedRunUsage, sourceOf } from './calibrate-sources.ts'
import { transcriptFiles } from './import.ts'
import { detectFormat, READERS } from './observed/transcripts/index.ts'
import { type ReplayedRequest, replayObserved } from './observed/transcripts/replay.ts'
import type { ObservedRequest, TranscriptFormat, TranscriptProblem } from './observed/transcripts/types.ts'

/** The read grid a simulator-based prediction uses: the catalog's for the model. */
function catalogGrid(provider: ProviderId, model: string): number | undefined {
  const rules = simulationModel(vendorOf(provider), model).cache
  switch (rules.kind) {
    case 'deepseek':
      return rules.readGranularityTokens
    case 'openai-prefix':
      return rules.increment
    default:
      return undefined
  }
}

/** Whether a request is replayed for its placements: a DeepSeek request that carries its body. */
function placed(request: ObservedRequest): boolean {
  return request.provider === 'deepseek' && request.request !== undefined
}

/**
 * A file's DeepSeek requests replayed with exact unit positions (the documented mode), so each read is
 * placed on one of the predecessor's units; the grid is applied to the recorded position afterwards.
 */
function replayPlacements(deepseek: readonly ObservedRequest[]): ReplayedRequest[] {
  if (deepseek.length === 0) return []
  const models: ModelEntry[] = [...new Set(deepseek.map((request) => request.model))].map((model) => {
    const entry = simulationModel('deepseek', model)
    return { ...entry, cache: { ...entry.cache, readGranularityTokens: 0 } } as ModelEntry
  })
  return replayObserved(deepseek, { models })
}

/**
 * Read every source (one file at a time) and calibrate: transcripts (replayed through the simulators
 * where they hold the request), keyed runs' steps.csv and live captures (the prediction made when the
 * request was sent).
 */
export async function calibrateFiles(
  paths: readonly string[],
  options: { format: TranscriptFormat | 'auto'; lenient: boolean },
): Promise<{ models: ModelCalibration[]; files: number; problems: TranscriptProblem[] }> {
  const sources = paths.map(sourceOf)
  const transcriptPaths = sources.flatMap((source) => (source.kind === 'transcripts' ? [source.path] : []))
  const files = transcriptPaths.length === 0 ? [] : transcriptFiles(transcriptPaths)
  if (files.length === 0 && sources.every((source) => source.kind === 'transcripts'))
    throw new CachelabError('input', `no transcript files under ${paths.join(', ')}`)
  const problems: TranscriptProblem[] = []
  const requests = new CalibrationRequests()
  for (const file of files) {
    const format = options.format === 'auto' ? await detectFormat(file) : options.format
    if (format === undefined)
      throw new CachelabError(
        'input',
        `${file}: not a transcript cachelab reads (claude-code, codex, dsh, pi); name one with --format`,
      )
    // Each request is packed as it is read (labels, time, buckets), but for the DeepSeek requests the
    // simulator replays after the file for their placements; their replay is set in afterwards.
    const deepseek: Array<{ request: ObservedRequest; index: number }> = []
    for await (const request of READERS[format](file, {
      lenient: options.lenient,
      onProblem: (problem) => problems.push(problem),
    })) {
      // A copy of another session's request (a fork's) is calibrated where it was made.
      if (request.copied !== undefined) continue
      const index = requests.add(request)
      if (placed(request)) deepseek.push({ request, index })
    }
    const replayed = replayPlacements(deepseek.map((entry) => entry.request))
    for (const [position, { index }] of deepseek.entries()) requests.setReplay(index, replayed[position])
  }
  for (const source of sources) {
    if (source.kind === 'transcripts') continue
    const recorded = source.kind === 'capture' ? captureUsage(source.dir) : keyedRunUsage(source.file)
    for (const [index, request] of recorded.requests.entries())
      requests.add(request, { prediction: recorded.predictions[index] })
  }
  const models = calibrate({ requests, catalogGrid } satisfies CalibrationInput)
  return {
    models,
    files: files.length + sources.filter((source) => source.kind !== 'transcripts').length,
    problems,
  }
}
