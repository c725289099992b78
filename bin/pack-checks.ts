// What the packed-tarball e2e (bin/pack-e2e.ts) checks, as pure functions: which files the tarball must
// and must not hold, and the library examples of docs/library.md, read from its code fences so the page is
// what the e2e runs and cannot drift from it.

/**
 * Files every tarball must hold: the entry points with their declarations, the launcher, the CLI, the
 * worker thread `run` spreads sessions over, and the reference the README links to (docs/).
 */
export const REQUIRED_PACK_FILES = [
  'package.json',
  'README.md',
  'docs/README.md',
  'docs/install.md',
  'LICENSE',
  'bin/cachelab.js',
  'dist/bin/cli.js',
  'dist/bin/api.js',
  'dist/bin/api.d.ts',
  'dist/scenarios/session-worker.js',
  'dist/reports/vitest.js',
  'dist/reports/vitest.d.ts',
  'dist/reports/msw.js',
  'dist/reports/msw.d.ts',
] as const

/** Files users never need, each with why it is named. */
const UNWANTED: ReadonlyArray<{ pattern: RegExp; what: string }> = [
  { pattern: /\.test\.(ts|js|d\.ts)$/, what: 'a test' },
  { pattern: /\.bench\.(ts|js|d\.ts)$/, what: 'a benchmark' },
  { pattern: /(^|\/)testing\.(js|d\.ts)$/, what: 'a test helper' },
  { pattern: /(^|\/)[^/]+(?<!\.d)\.ts$/, what: 'TypeScript source' },
  { pattern: /(^|\/)\.ci\//, what: 'CI files' },
  { pattern: /(^|\/)\.github\//, what: 'CI files' },
  { pattern: /^notes\//, what: 'a design note' },
  { pattern: /(^|\/)baselines\//, what: 'a baseline' },
  { pattern: /(^|\/)reports\/out\//, what: 'run output' },
  { pattern: /(^|\/)testdata\//, what: 'test data' },
  { pattern: /(^|\/)(tsconfig[^/]*|biome|vitest\.config[^/]*)\.(json|ts)$/, what: 'build configuration' },
  { pattern: /(^|\/)\.env/, what: 'an environment file' },
  { pattern: /\.(map|tsbuildinfo)$/, what: 'a build artifact' },
]

/** What is wrong with a tarball's file list: each required file missing, each unwanted file present. */
export function packProblems(files: readonly string[]): string[] {
  const present = new Set(files)
  const problems = REQUIRED_PACK_FILES.filter((file) => !present.has(file)).map((file) => `missing: ${file}`)
  for (const file of files) {
    const unwanted = UNWANTED.find((entry) => entry.pattern.test(file))
    if (unwanted !== undefined) problems.push(`unwanted (${unwanted.what}): ${file}`)
  }
  return problems
}

/** A test file of docs/library.md. */
export interface ReadmeTestFile {
  /** The file name in the user's project, from the fence's `file=NAME`. */
  name: string
  /** The fence's content. */
  code: string
  /** The fence is marked `fails`: the documented negative case, which must fail. */
  fails: boolean
}

/** The library examples of docs/library.md. */
export interface ReadmeExamples {
  files: ReadmeTestFile[]
  /** Per failing file, the lines its failure prints, from a fence marked `failure=NAME`. */
  failures: Map<string, string[]>
}

/**
 * The examples in a README: fences whose info string carries `file=NAME` (`fails` marks the negative case),
 * and `failure=NAME` fences with what that case prints. Other fences are ignored.
 */
export function readmeExamples(markdown: string): ReadmeExamples {
  const files: ReadmeTestFile[] = []
  const failures = new Map<string, string[]>()
  const lines = markdown.split('\n')
  for (let index = 0; index < lines.length; index += 1) {
    const opening = /^(`{3,})(.*)$/.exec(lines[index] ?? '')
    if (opening === null) continue
    const fence = opening[1] as string
    const words = (opening[2] ?? '').trim().split(/\s+/)
    const body: string[] = []
    index += 1
    while (index < lines.length && (lines[index] ?? '').trim() !== fence) {
      body.push(lines[index] ?? '')
      index += 1
    }
    const file = attribute(words, 'file')
    const failure = attribute(words, 'failure')
    if (file !== undefined)
      files.push({ name: file, code: `${body.join('\n')}\n`, fails: words.includes('fails') })
    if (failure !== undefined)
      failures.set(
        failure,
        body.map((line) => line.trim()).filter((line) => line !== ''),
      )
  }
  return { files, failures }
}

/** What the examples lack to be run: a failing case without its output, an output without its case. */
export function examplesProblems(examples: ReadmeExamples): string[] {
  const problems: string[] = []
  if (!examples.files.some((file) => !file.fails))
    problems.push('no passing example (a fence with file=NAME)')
  for (const file of examples.files) {
    if (file.fails && !examples.failures.has(file.name))
      problems.push(`${file.name} is marked fails but no failure=${file.name} fence shows what it prints`)
  }
  for (const name of examples.failures.keys()) {
    if (!examples.files.some((file) => file.name === name && file.fails))
      problems.push(`failure=${name} documents a file that is not a failing example`)
  }
  return problems
}

function attribute(words: readonly string[], key: string): string | undefined {
  const word = words.find((candidate) => candidate.startsWith(`${key}=`))
  return word?.slice(key.length + 1)
}

/**
 * The optional peers a bare install (the tarball and Vitest) must not bring: every client library,
 * DSH's loop and better-sqlite3. A package is matched by name, or by scope where the whole scope is one
 * library's.
 */
export const OPTIONAL_PEER_PATTERNS: readonly RegExp[] = [
  /^openai$/,
  /^@anthropic-ai\//,
  /^@google\/genai$/,
  /^@aws-sdk\/client-bedrock-runtime$/,
  /^ai$/,
  /^@ai-sdk\//,
  /^@langchain\//,
  /^@openai\/agents/,
  /^@mariozechner\/pi-ai$/,
  /^@deepseek-ai\//,
  /^better-sqlite3$/,
]

/** A dependency tree as `npm ls --all --json` prints it. */
export interface NpmTree {
  version?: string
  missing?: boolean
  dependencies?: Readonly<Record<string, NpmTree>>
}

/** The `name@version` of every package installed in an `npm ls --all --json` tree (missing ones left out). */
export function installedPackages(tree: NpmTree): string[] {
  const found = new Set<string>()
  const visit = (node: NpmTree) => {
    for (const [name, child] of Object.entries(node.dependencies ?? {})) {
      if (child.missing === true || child.version === undefined) continue
      found.add(`${name}@${child.version}`)
      // A deduped entry carries no dependencies, and may come before the full one: every entry is walked
      // (npm's JSON tree is finite, deduped entries ending it).
      visit(child)
    }
  }
  visit(tree)
  return [...found].sort()
}

/** The installed packages (`name@version`) that are optional peers, which a bare install must not bring. */
export function unaskedPeers(packages: readonly string[]): string[] {
  return packages.filter((spec) => {
    const name = spec.slice(0, spec.lastIndexOf('@') > 0 ? spec.lastIndexOf('@') : spec.length)
    return OPTIONAL_PEER_PATTERNS.some((pattern) => pattern.test(name))
  })
}

/**
 * What `npm publish --dry-run` warned about the package: its `npm warn` lines, but for the one every
 * dry run without a login prints (the dry run does not log in, and publishing is not what is tested).
 */
export function publishWarnings(output: string): string[] {
  return output
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^npm (warn|WARN)\b/.test(line))
    .filter((line) => !/requires you to be logged in/.test(line))
}
