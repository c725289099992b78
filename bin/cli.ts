// The cachelab command line (ARCHITECTURE.md's contract): subcommands, exit codes 0 ok, 1 a check
// failed, 2 usage or input error with a one-line reason.

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import { useCatalog } from '../providers/compatible.ts'
import { parseCatalogFile } from '../providers/compatible-file.ts'

const USAGE = `usage: cachelab <command> [options]

  run       [--scenario NAME[,NAME]|all] [--provider ID[,ID]|all] [--variant NAME[,NAME]|all]
            [--model MODEL] [--live] [--stream|--no-stream] [--out DIR] [--json]
            [--jobs N]   worker threads for the sessions (default: the cores; 1: in process)
            [--loop model|dsh|sdk|ai-sdk|langchain|pi-ai|openai-agents[,…]]   the agent loops;
            a client-library loop runs beside the sdk reference on the simulator, compared in
            libraries.csv (an absent library is skipped with its npm i)
            [--agent claude-code|codex|gemini-cli|opencode|qwen-code|pi|kilo[@VERSION][,…]]   real coding
            agents headless against a loopback serve through agent scenarios (--scenario names them):
            agents.csv and agent-steps.csv; the one on PATH, else the pinned or asked-for version
            [--scenarios PATH[,PATH]]   your own scenario files (.ts, .js, .mjs, or a directory of
            them); a run covers only those unless --scenario names others (all: every scenario)
            [--otlp-file FILE] [--otlp-endpoint URL] [--otel-names genai|openinference|both]
            [--otel-epoch fixed|now|ISO-8601]   the rows as OpenTelemetry spans, one trace per session
  simulate  --provider ID [--model MODEL] FILE.jsonl   (or - for stdin)
            the cache simulator alone: one usage line per request body
  check     --baseline DIR [--out DIR] [--tolerance PP] [--scenarios PATH]
            every baseline session's warm hit ratio must hold within PP points (default 0.5)
            in the run at --out DIR (default reports/out/latest)
  compare   A B [C …]
            runs side by side, the first the baseline (summary.csv or steps.csv files, or run folders)
  serve     [--port N] [--host 127.0.0.1] [--upstream sim|live] [--log FILE.jsonl]
            [--record DIR [--record-bodies|--record-no-text]] [--replay DIR] [--faults FILE] [--lenient]
            [--replies FILE]
            [--memory-budget MB] [--max-body SIZE]
            the mock providers (or a recording proxy to the real APIs) over HTTP;
            --record captures every request of any client, per session (live: with the
            model's answers), and the words around each break (--record-no-text: no text at all);
            --replay answers a recorded capture's requests again;
            --faults fails chosen requests (429, 529, 500, cut streams) for a client's retries;
            --lenient accepts what the real APIs refuse;
            --replies scripts what the simulated model answers per session, turn and step;
            --memory-budget bounds the caches (default 384 MiB); --max-body refuses larger
            bodies with a 413 (default 32m); GET /cachelab/health reports load and memory
  record    [--out DIR] [--baseline DIR [--tolerance PP]] [--upstream sim|live] [--replies FILE]
            [--faults FILE] [--lenient] [--record-bodies|--record-no-text] [--log FILE.jsonl] -- COMMAND [ARGS…]
            serve around any test run: the command runs with every vendor's *_BASE_URL pointing at a
            serve on a free loopback port, recorded into DIR/capture (default
            reports/out/record-<timestamp>) and reported into DIR; --baseline gates it as check does.
            Exit: the command's code when non-zero, else 1 on a regression, else 0
  report    CAPTURE_DIR [--out DIR] [--scenario NAME] [--otlp-file FILE] [--otlp-endpoint URL] …
            a capture as steps.csv, summary.csv, breaks.csv and report.html (default: in CAPTURE_DIR)
  gateway   CLIENT_CAPTURE UPSTREAM_CAPTURE [--out DIR]
            both sides of a gateway (serve --record-bodies in front of it and behind it) as DIR/direct
            (the baseline), DIR/gateway and DIR/changes.csv; gate with check --baseline DIR/direct
  import    [FILE|DIR...] [--agent NAME,…] [--since DATE] [--until DATE]
            [--format auto|claude-code|codex|dsh|gemini-cli|kilo|opencode|pi|qwen-code] [--out DIR] [--lenient] [--ttl 1h]
            [--as PROVIDER [--model MODEL]] [--policy consolidate|keep-live] [--otlp-file FILE] …
            an agent's own sessions (Claude Code, Codex, DSH, Gemini CLI, Kilo Code, opencode, pi, qwen-code;
            with no path, every agent's folders under the home) as the run's files plus rewrites.csv:
            every cache write and miss classified, with its tokens and dollars; --as replays the
            requests a transcript holds (DSH) as another provider into counterfactual.csv; --policy
            re-derives DSH logs under a series-start policy into policy.csv and policy-steps.csv
  calibrate FILE|DIR... [--format auto|claude-code|codex|dsh|gemini-cli|kilo|opencode|pi|qwen-code] [--out DIR] [--lenient]
            recorded usage against the simulators, per provider and model: calibration.csv (every
            step: recorded and predicted read, exact / within one unit / off, why) and
            calibration-models.csv (read grid, unit placement, token scale, TTL seen); reads
            transcripts, keyed runs (a run --live folder or its steps.csv) and live captures
            (serve --upstream live --record DIR)
  list      [--scenarios PATH]  scenarios (yours and the built-ins), their variants, providers and models
  validate  FILE|DIR...
            cachelab's own session logs (DIR: every *.jsonl below it, such as a run's sessions/), every
            line checked, each problem as file:line; exit 1 when a log is invalid

Every command takes --catalog FILE (or CACHELAB_CATALOG=FILE): OpenAI-compatible providers in JSON,
merged with the shipped catalog (xai, kimi, openrouter, mistral, qwen, glm); see docs/providers.md.

Exit codes: 0 ok, 1 a check failed, 2 usage or input error.`

/**
 * Each command, loaded when it runs: a command's module graph (msw for serve, the simulators and agent
 * loops for run, the report writers for import) is imported only by the command that needs it, so a
 * start pays for one command, not all eleven (notes/2026-12-02-import-speed-2.md).
 */
const COMMANDS: Readonly<Record<string, (rest: string[]) => Promise<number> | number>> = {
  run: async (rest) => (await import('./run-command.ts')).runCommand(rest),
  simulate: async (rest) => (await import('./simulate-command.ts')).simulateCommand(rest),
  serve: async (rest) => (await import('./serve-command.ts')).serveCommand(rest),
  check: async (rest) => (await import('./check-command.ts')).checkCommand(rest),
  compare: async (rest) => (await import('./compare-command.ts')).compareCommand(rest),
  list: async (rest) => (await import('./list-command.ts')).listCommand(rest),
  import: async (rest) => (await import('./import-command.ts')).importCommand(rest),
  calibrate: async (rest) => (await import('./calibrate-command.ts')).calibrateCommand(rest),
  report: async (rest) => (await import('./report-command.ts')).reportCommand(rest),
  gateway: async (rest) => (await import('./gateway-command.ts')).gatewayCommand(rest),
  record: async (rest) => (await import('./record-command.ts')).recordCommand(rest),
  validate: async (rest) => (await import('./validate-command.ts')).validateCommand(rest),
}

/** Run the CLI; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  // The AWS SDK warns on Node 20 that its releases after January 2027 need Node 22. cachelab pins its
  // release, so the warning says nothing about this command (docs/library.md names the Node versions); a user
  // who set the variable (to anything but empty) keeps their choice.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ||= 'true'
  const [command, ...given] = argv
  try {
    const rest = loadCatalog(given, process.env)
    const run = command !== undefined && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined
    if (run !== undefined) return await run(rest)
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      process.stdout.write(`${USAGE}\n`)
      return command === undefined ? 2 : 0
    }
    throw new CachelabError('usage', `unknown command ${JSON.stringify(command)} (try cachelab help)`)
  } catch (error) {
    if (
      error instanceof CachelabError &&
      (error.kind === 'usage' || error.kind === 'input' || error.kind === 'log')
    ) {
      process.stderr.write(`cachelab: ${error.message}\n`)
      return 2
    }
    process.stderr.write(`cachelab: ${error instanceof Error ? error.message : String(error)}\n`)
    return 2
  }
}

/**
 * Take `--catalog FILE` (any command; else CACHELAB_CATALOG) off the arguments and merge the file's
 * providers into the catalog. The chosen file is exported as CACHELAB_CATALOG so worker threads and
 * child processes load the same catalog. No file: the shipped catalog alone.
 */
function loadCatalog(argv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const rest: string[] = []
  let file: string | undefined
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index] as string
    // After `--` the arguments are another command's (cachelab record): none of them is ours.
    if (argument === '--') {
      rest.push(...argv.slice(index))
      break
    }
    if (argument === '--catalog' || argument.startsWith('--catalog=')) {
      if (argument === '--catalog') index += 1
      const value = argument === '--catalog' ? argv[index] : argument.slice('--catalog='.length)
      if (value === undefined || value === '') throw new CachelabError('usage', '--catalog needs a file')
      file = value
    } else rest.push(argument)
  }
  file ??= env.CACHELAB_CATALOG?.trim() || undefined
  if (file === undefined) {
    useCatalog([])
    return rest
  }
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message
    throw new CachelabError('input', `cannot read the catalog ${file}: ${reason}`)
  }
  useCatalog(parseCatalogFile(text, file))
  env.CACHELAB_CATALOG = resolve(file)
  return rest
}
