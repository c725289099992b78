// Every command's flags and help text: the one table the parser (args.ts), the help (help.ts) and the docs'
// check (command-line.ts) read. Data only, so `cachelab --help` and `cachelab run --help` load no command
// (the agents' and transcript formats' names come from modules of constants and types alone).

import { AGENT_NAMES } from '../harness/loops/agents/types.ts'
import { TRANSCRIPT_FORMATS } from '../reports/observed/transcripts/types.ts'

/** One flag: how it parses and how its help line reads. */
export interface FlagSpec {
  readonly type: 'string' | 'boolean'
  /** The value's placeholder in help (`DIR`, `N`); string flags only. */
  readonly value?: string
  /** What the flag does, in a line. */
  readonly description?: string
  /** Show `--no-NAME` in help too (every boolean flag accepts it). */
  readonly negatable?: boolean
}

/** A command's flags by name (without the `--`). */
export type Flags = Readonly<Record<string, FlagSpec>>

/** A command as help shows it and the parser reads it. */
export interface CommandSpec {
  /** One line for `cachelab --help`. */
  readonly summary: string
  /** The positional arguments' synopsis (`FILE|DIR...`); absent: the command takes none. */
  readonly arguments?: string
  /** Given nothing at all, the command prints its usage and exits 2 instead of running. */
  readonly needsArguments?: boolean
  /** What the command does, for its own `--help`. */
  readonly details: string
  readonly flags: Flags
}

/** The OpenTelemetry export flags of every command that writes rows (otel-option.ts checks them). */
export const OTEL_FLAGS = {
  'otlp-file': {
    type: 'string',
    value: 'FILE',
    description: 'the rows as OTLP/JSON spans, one trace per session',
  },
  'otlp-endpoint': { type: 'string', value: 'URL', description: 'the spans sent to an OTLP/HTTP collector' },
  'otel-names': {
    type: 'string',
    value: 'SET',
    description: "the attribute names' convention: genai (default), openinference or both",
  },
  'otel-epoch': {
    type: 'string',
    value: 'WHEN',
    description: "the spans' start: fixed (a simulated run's default), now or an ISO-8601 time",
  },
} as const satisfies Flags

const FORMATS = TRANSCRIPT_FORMATS.join(', ')

/** How import and calibrate read transcripts: the format, and whether unreadable lines are skipped. */
const FORMAT_FLAG = {
  type: 'string',
  value: 'FORMAT',
  description: `the transcript format: auto (default: told by the content), ${FORMATS}`,
} as const
const LENIENT_FLAG = {
  type: 'boolean',
  description: 'skip lines that cannot be read, counting them',
} as const

export const RUN_FLAGS = {
  scenario: { type: 'string', value: 'NAME[,NAME]|all', description: 'the scenarios to run (default: all)' },
  scenarios: {
    type: 'string',
    value: 'PATH[,PATH]',
    description:
      'your own scenario files (.ts, .js, .mjs, or a directory of them); a run covers only those unless --scenario names others',
  },
  provider: {
    type: 'string',
    value: 'ID[,ID]|all',
    description: 'the providers (default: the built-in matrix)',
  },
  variant: { type: 'string', value: 'NAME[,NAME]|all', description: "the scenarios' variants" },
  model: { type: 'string', value: 'MODEL', description: "the model (default: each provider's default)" },
  live: { type: 'boolean', description: 'the real APIs, with the keys in the environment or .env' },
  stream: { type: 'boolean', negatable: true, description: 'streamed responses (default: not streamed)' },
  out: { type: 'string', value: 'DIR', description: 'the run folder (default reports/out/<timestamp>)' },
  json: { type: 'boolean', description: 'the summary as JSON on stdout' },
  loop: {
    type: 'string',
    value: 'NAME[,NAME]',
    description:
      'the agent loops: model (default), dsh, sdk, ai-sdk, langchain, pi-ai, openai-agents; a client-library loop runs beside the sdk reference, compared in libraries.csv (an absent library is skipped with its npm i)',
  },
  agent: {
    type: 'string',
    value: 'NAME[@VERSION][,…]',
    description: `real coding agents (${AGENT_NAMES.join(', ')}) headless against a loopback serve through agent scenarios: agents.csv and agent-steps.csv`,
  },
  jobs: {
    type: 'string',
    value: 'N',
    description: 'worker threads for the sessions (default: the cores; 1: in process)',
  },
  shard: {
    type: 'string',
    value: 'I/N',
    description:
      "this machine's share of the run (balanced, the same split on every machine): a shard folder for merge-reports (docs/shards.md)",
  },
  ...OTEL_FLAGS,
} as const satisfies Flags

export const SIMULATE_FLAGS = {
  provider: { type: 'string', value: 'ID', description: 'the provider whose cache rules apply (required)' },
  model: { type: 'string', value: 'MODEL', description: "the model (default: the provider's default)" },
} as const satisfies Flags

export const SERVE_FLAGS = {
  port: { type: 'string', value: 'N', description: 'the port (0: a free one)' },
  host: { type: 'string', value: 'HOST', description: 'the address to listen on (default 127.0.0.1)' },
  upstream: {
    type: 'string',
    value: 'sim|live',
    description: 'answer from the simulators (default) or relay to the real APIs',
  },
  log: {
    type: 'string',
    value: 'FILE.jsonl',
    description: 'every request and its usage, one JSON line each',
  },
  record: { type: 'string', value: 'DIR', description: 'every request of any client captured, per session' },
  'record-bodies': { type: 'boolean', description: 'keep the whole request bodies in the capture' },
  'record-no-text': { type: 'boolean', description: 'no text at all in the capture' },
  replay: { type: 'string', value: 'DIR', description: "answer a recorded capture's requests again" },
  faults: {
    type: 'string',
    value: 'FILE',
    description: "fail chosen requests (429, 529, 500, cut streams) for a client's retries",
  },
  lenient: { type: 'boolean', description: 'accept what the real APIs refuse' },
  replies: {
    type: 'string',
    value: 'FILE',
    description: 'what the simulated model answers, per session, turn and step',
  },
  expose: { type: 'boolean', description: 'allow a host other machines reach (no authentication)' },
  'memory-budget': { type: 'string', value: 'MB', description: 'the bound on the caches (default 384)' },
  'max-body': { type: 'string', value: 'SIZE', description: 'refuse larger bodies with a 413 (default 32m)' },
} as const satisfies Flags

/** serve's flags that mean the same around a command; the port, host and --record are record's to choose. */
export const SERVE_FLAGS_AROUND = {
  upstream: SERVE_FLAGS.upstream,
  replies: SERVE_FLAGS.replies,
  faults: SERVE_FLAGS.faults,
  lenient: SERVE_FLAGS.lenient,
  'record-bodies': SERVE_FLAGS['record-bodies'],
  'record-no-text': SERVE_FLAGS['record-no-text'],
  log: SERVE_FLAGS.log,
  'memory-budget': SERVE_FLAGS['memory-budget'],
  'max-body': SERVE_FLAGS['max-body'],
} as const satisfies Flags

export const CHECK_FLAGS = {
  baseline: {
    type: 'string',
    value: 'DIR',
    description: 'the baseline run folder (required), such as reports/baselines',
  },
  out: { type: 'string', value: 'DIR', description: 'the run to check (default reports/out/latest)' },
  tolerance: {
    type: 'string',
    value: 'PP',
    description: 'the warm hit ratio may fall this many percentage points (default 0.5)',
  },
  'cost-tolerance': {
    type: 'string',
    value: 'PERCENT',
    description: 'the cost may rise this much (default 1)',
  },
  'break-threshold': {
    type: 'string',
    value: 'TOKENS',
    description: 'a new break rewriting this many tokens fails the gate (default 1024)',
  },
  strict: { type: 'boolean', description: 'changes for the better fail too (the baseline is stale)' },
  update: { type: 'boolean', description: 'write the run into the baseline when it passes' },
  scenario: { type: 'string', value: 'NAME[,NAME]', description: 'check these scenarios only' },
  variant: { type: 'string', value: 'NAME[,NAME]', description: 'check these variants only' },
  provider: { type: 'string', value: 'ID[,ID]', description: 'check these providers only' },
  scenarios: { type: 'string', value: 'PATH', description: 'your scenario files, as the run had them' },
  reporter: {
    type: 'string',
    value: 'NAME[=FILE][,…]',
    description: 'text, json, junit or github (detected under GitHub Actions)',
  },
  json: { type: 'boolean', description: 'the verdict as JSON on stdout' },
} as const satisfies Flags

export const LIST_FLAGS = {
  scenarios: {
    type: 'string',
    value: 'PATH',
    description: 'your own scenario files, listed beside the built-ins',
  },
} as const satisfies Flags

export const IMPORT_FLAGS = {
  format: FORMAT_FLAG,
  out: {
    type: 'string',
    value: 'DIR',
    description: 'the folder for the files (default reports/out/import-<timestamp>)',
  },
  lenient: LENIENT_FLAG,
  ttl: { type: 'string', value: '1h', description: 'price cache writes at the one-hour lifetime' },
  as: {
    type: 'string',
    value: 'PROVIDER',
    description: 'replay the requests as another provider (counterfactual.csv)',
  },
  model: { type: 'string', value: 'MODEL', description: 'the model of --as PROVIDER' },
  policy: {
    type: 'string',
    value: 'POLICY',
    description: 'DSH logs re-derived under a series-start policy, consolidate or keep-live (policy.csv)',
  },
  agent: { type: 'string', value: 'NAME[,…]', description: "with no path: only these agents' folders" },
  since: {
    type: 'string',
    value: 'DATE',
    description: 'sessions from this day (2026-11-01, 20261101 or an ISO time)',
  },
  until: { type: 'string', value: 'DATE', description: 'sessions up to this day, included' },
  json: { type: 'boolean', description: 'the sessions as JSON on stdout' },
  ...OTEL_FLAGS,
} as const satisfies Flags

export const CALIBRATE_FLAGS = {
  format: FORMAT_FLAG,
  out: {
    type: 'string',
    value: 'DIR',
    description: 'the folder for calibration.csv and calibration-models.csv',
  },
  lenient: LENIENT_FLAG,
} as const satisfies Flags

export const REPORT_FLAGS = {
  out: {
    type: 'string',
    value: 'DIR',
    description: 'the folder for the files (default: the capture folder)',
  },
  scenario: { type: 'string', value: 'NAME', description: "the name the capture's rows carry" },
  ...OTEL_FLAGS,
} as const satisfies Flags

export const RECORD_FLAGS = {
  out: {
    type: 'string',
    value: 'DIR',
    description: 'the report folder (default reports/out/record-<timestamp>)',
  },
  baseline: { type: 'string', value: 'DIR', description: 'gate the capture as check does' },
  tolerance: {
    type: 'string',
    value: 'PP',
    description: "the gate's tolerance in percentage points (default 0.5)",
  },
  reporter: {
    type: 'string',
    value: 'NAME[=FILE][,…]',
    description: "check's reporters for the gate's verdict",
  },
  ...SERVE_FLAGS_AROUND,
} as const satisfies Flags

export const GATEWAY_FLAGS = {
  out: { type: 'string', value: 'DIR', description: 'the folder for direct/, gateway/ and changes.csv' },
} as const satisfies Flags

export const MERGE_FLAGS = {
  out: {
    type: 'string',
    value: 'DIR',
    description: "the merged run's folder (default reports/out/<timestamp>)",
  },
  scenarios: {
    type: 'string',
    value: 'PATH[,PATH]',
    description: 'your own scenario files, as the shards ran them',
  },
} as const satisfies Flags

/**
 * The commands in the order `cachelab --help` lists them. A new command is an entry here and a loader in
 * cli.ts's COMMANDS; a new flag is a line in its command's flags table.
 */
export const COMMAND_SPECS = {
  run: {
    summary: 'run scenarios × providers × variants on the simulator (or --live) and write the run',
    details:
      'The scenario matrix through the agent loops, on the cache simulators or (--live) the real APIs: steps.csv, summary.csv, breaks.csv, claims.csv, report.html and the session logs in the run folder, the summary on stdout.',
    flags: RUN_FLAGS,
  },
  'merge-reports': {
    summary: "the shards of a run (run --shard i/n) as the run's own folder",
    arguments: 'SHARD_DIR...',
    needsArguments: true,
    details:
      'Checks that the shards cover the planned run exactly once (one manifest, no gap, no duplicate), then writes the folder a single run writes — byte for byte the same on the simulator — for check to gate.',
    flags: MERGE_FLAGS,
  },
  simulate: {
    summary: 'the cache simulator alone: one usage line per request body',
    arguments: 'FILE.jsonl',
    needsArguments: true,
    details:
      'Reads request bodies, one JSON line each (FILE.jsonl, or - for stdin), and prints the usage the provider would report for each.',
    flags: SIMULATE_FLAGS,
  },
  check: {
    summary: "gate a run on a baseline's warm hit ratios, costs and breaks",
    needsArguments: true,
    details:
      "Every baseline session's warm hit ratio must hold within --tolerance points in the run at --out (default reports/out/latest). Exit 1 when the gate fails.",
    flags: CHECK_FLAGS,
  },
  compare: {
    summary: 'runs side by side, the first the baseline',
    arguments: 'A B [C …]',
    needsArguments: true,
    details:
      'Each run is a summary.csv or steps.csv file, or a run folder. Informational: exits 0 whatever the numbers say.',
    flags: {},
  },
  serve: {
    summary: 'the mock providers (or a recording proxy to the real APIs) over HTTP',
    details:
      "Serves every provider's API on loopback, answered by the simulators (or relayed with --upstream live); --record captures every request of any client, per session. GET /cachelab/health reports load and memory.",
    flags: SERVE_FLAGS,
  },
  record: {
    summary: 'serve around any test run, reported and optionally gated',
    arguments: '-- COMMAND [ARGS…]',
    needsArguments: true,
    details:
      "The command runs with every vendor's *_BASE_URL pointing at a serve on a free loopback port, recorded into DIR/capture and reported into DIR; --baseline gates it as check does. Exit: the command's code when non-zero, else 1 on a regression, else 0.",
    flags: RECORD_FLAGS,
  },
  report: {
    summary: 'a capture as steps.csv, summary.csv, breaks.csv and report.html',
    arguments: 'CAPTURE_DIR',
    needsArguments: true,
    details:
      'Reads a capture (serve --record DIR) and writes the run files, by default into the capture folder.',
    flags: REPORT_FLAGS,
  },
  gateway: {
    summary: 'both sides of a gateway compared: what it changes in the cache',
    arguments: 'CLIENT_CAPTURE UPSTREAM_CAPTURE',
    needsArguments: true,
    details:
      'Two captures (serve --record-bodies in front of the gateway and behind it) as DIR/direct (the baseline), DIR/gateway and DIR/changes.csv; gate with check --baseline DIR/direct.',
    flags: GATEWAY_FLAGS,
  },
  import: {
    summary: "an agent's own sessions (transcripts) as a run, every cache write and miss classified",
    arguments: '[FILE|DIR...]',
    details:
      "Claude Code, Cline, Codex, Copilot CLI, DSH, Factory Droid, Gemini CLI, opencode, pi and qwen-code transcripts (with no path: every agent's folders under the home) as the run's files plus rewrites.csv.",
    flags: IMPORT_FLAGS,
  },
  calibrate: {
    summary: 'recorded usage against the simulators, per provider and model',
    arguments: 'FILE|DIR...',
    needsArguments: true,
    details:
      'Transcripts, keyed runs (a run --live folder or its steps.csv) and live captures compared with what the simulators predict: calibration.csv and calibration-models.csv.',
    flags: CALIBRATE_FLAGS,
  },
  list: {
    summary: 'scenarios, variants, loops, agents, providers and models',
    details:
      'What can be run: your scenarios (--scenarios) and the built-ins, the loops, the coding agents and the catalog.',
    flags: LIST_FLAGS,
  },
  validate: {
    summary: "check cachelab's own session logs line by line",
    arguments: 'FILE|DIR...',
    needsArguments: true,
    details:
      "Every line of each log checked (DIR: every *.jsonl below it, such as a run's sessions/), each problem as file:line; exit 1 when a log is invalid.",
    flags: {},
  },
} as const satisfies Record<string, CommandSpec>

export type CommandName = keyof typeof COMMAND_SPECS
