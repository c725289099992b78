// `npm run test:pack`'s user project: the tarball installed with Vitest, Vite and the openai SDK into an
// empty ESM project; each entry point imports in plain node and through require, the built JavaScript
// needs no tsx, `list` and `run` work, a user's test files type-check, and docs/library.md's examples run.

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { readmeExamples } from './pack-checks.ts'
import {
  ENTRY_EXPORTS,
  emptyProject,
  exec,
  inform,
  listProblems,
  megabytes,
  PEERS,
  repository,
  skipLibCheck,
  step,
  tail,
} from './pack-run.ts'

/** The user project's checks, in `project`, installing `tarball` with docs/library.md's `examples`. */
export function userProjectChecks(
  tarball: string | undefined,
  project: string,
  examples: ReturnType<typeof readmeExamples>,
): void {
  let installed = false
  step(`an empty ESM project installs the tarball with ${PEERS.join(', ')}`, () => {
    if (tarball === undefined) return ['no tarball']
    emptyProject(project, 'cachelab-user')
    const install = exec(
      'npm',
      ['install', '--save-dev', '--prefer-offline', '--no-audit', '--no-fund', tarball, ...PEERS],
      project,
    )
    if (install.code !== 0) return ['npm install failed:', ...tail(install)]
    installed = true
    inform(`node_modules: ${megabytes(join(project, 'node_modules'))}`)
    return existsSync(join(project, 'node_modules', 'tsx'))
      ? ['tsx got installed, so the checks below could not tell whether cachelab needs it']
      : []
  })

  step('each entry point imports in plain node (ESM), with its exports', () => {
    if (!installed) return ['not installed']
    const problems: string[] = []
    for (const [specifier, names] of Object.entries(ENTRY_EXPORTS)) {
      const script = `const m = await import(${JSON.stringify(specifier)}); const missing = ${JSON.stringify(names)}.filter((name) => !(name in m)); if (missing.length > 0) { console.log('missing exports: ' + missing.join(', ')); process.exit(1) }`
      const imported = exec(process.execPath, ['--input-type=module', '-e', script], project)
      if (imported.code !== 0) problems.push(`import('${specifier}') failed:`, ...tail(imported, 8))
    }
    const manifest = exec(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('cachelab/package.json', { with: { type: 'json' } }); if (m.default.name !== 'cachelab') process.exit(1)",
      ],
      project,
    )
    if (manifest.code !== 0) problems.push("import('cachelab/package.json') failed:", ...tail(manifest, 8))
    return problems
  })

  step('each entry point loads through require() too (CommonJS, Node 20.19+)', () => {
    if (!installed) return ['not installed']
    const problems: string[] = []
    for (const [specifier, names] of Object.entries(ENTRY_EXPORTS)) {
      const script = `const m = require(${JSON.stringify(specifier)}); const missing = ${JSON.stringify(names)}.filter((name) => !(name in m)); if (missing.length > 0) { console.log('missing exports: ' + missing.join(', ')); process.exit(1) }`
      const required = exec(process.execPath, ['--no-warnings', '-e', script], project)
      if (required.code !== 0) problems.push(`require('${specifier}') failed:`, ...tail(required, 8))
    }
    return problems
  })

  step('the built JavaScript imports neither vitest nor tsx', () => {
    if (!installed) return ['not installed']
    const dist = join(project, 'node_modules', 'cachelab', 'dist')
    const offenders = (readdirSync(dist, { recursive: true }) as string[])
      .filter((file) => file.endsWith('.js'))
      .filter((file) =>
        /(from|import\()\s*['"](vitest|tsx)(\/[^'"]*)?['"]/.test(readFileSync(join(dist, file), 'utf8')),
      )
    return offenders.map((file) => `dist/${file} imports vitest or tsx at run time`)
  })

  step('npx cachelab list runs from node_modules with plain node', () =>
    installed ? listProblems(project) : ['not installed'],
  )

  step('npx cachelab run spreads sessions over worker threads from the built package', () => {
    if (!installed) return ['not installed']
    const out = join(project, 'jobs-run')
    const argv = [
      '--no-install',
      'cachelab',
      'run',
      '--scenario',
      'append-only',
      '--provider',
      'openai-chat,deepseek',
    ]
    const ran = exec('npx', [...argv, '--jobs', '2', '--out', out], project)
    if (ran.code !== 0) return [`exit ${ran.code}:`, ...tail(ran)]
    const sessions = readdirSync(join(out, 'sessions'))
    return sessions.length === 2 ? [] : [`expected 2 session logs, found ${sessions.join(', ') || 'none'}`]
  })

  /**
   * Vitest's default 5 s per test is a speed target on a loaded 2-core machine (docs/library.md's passing example
   * takes 5–6 s there, as it did before the optional peers): the examples get the room this repository's
   * own tests have.
   */
  const VITEST_ROOM = ['--testTimeout', '300000', '--hookTimeout', '300000']

  // docs/library.md's examples, and a file of our own that imports every entry point inside Vitest.
  const passing = examples.files.filter((file) => !file.fails)
  const failing = examples.files.filter((file) => file.fails)
  const entriesTest = {
    name: 'entries.test.ts',
    code: [
      "import { expect, it } from 'vitest'",
      '',
      `const ENTRY_EXPORTS: Record<string, string[]> = ${JSON.stringify(ENTRY_EXPORTS)}`,
      '',
      "it.each(Object.entries(ENTRY_EXPORTS))('%s imports in Vitest', async (specifier, names) => {",
      '  const entry = await import(specifier)',
      '  for (const name of names) expect(entry).toHaveProperty(name)',
      '})',
      '',
    ].join('\n'),
  }

  step("a user's test files type-check against the declarations (expect's matchers included)", () => {
    if (!installed) return ['not installed']
    for (const file of [...examples.files, entriesTest]) writeFileSync(join(project, file.name), file.code)
    const config = {
      compilerOptions: {
        target: 'ES2023',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck,
        types: ['node'],
        typeRoots: [join(repository, 'node_modules', '@types')],
      },
      files: [...examples.files, entriesTest].map((file) => file.name),
    }
    writeFileSync(join(project, 'tsconfig.json'), `${JSON.stringify(config, null, 2)}\n`)
    const typescript = join(repository, 'node_modules', 'typescript', 'bin', 'tsc')
    const checked = exec(process.execPath, [typescript, '-p', project], project)
    return checked.code === 0 ? [] : ['tsc failed:', ...tail(checked)]
  })

  step(`Vitest passes ${[entriesTest, ...passing].map((file) => file.name).join(', ')}`, () => {
    if (!installed) return ['not installed']
    const vitest = join(project, 'node_modules', '.bin', 'vitest')
    const ran = exec(
      vitest,
      ['run', ...VITEST_ROOM, ...[entriesTest, ...passing].map((file) => file.name)],
      project,
    )
    return ran.code === 0 ? [] : [`vitest exited ${ran.code}:`, ...tail(ran, 40)]
  })

  for (const file of failing) {
    step(`Vitest fails ${file.name}, printing the lines docs/library.md shows`, () => {
      if (!installed) return ['not installed']
      const vitest = join(project, 'node_modules', '.bin', 'vitest')
      const ran = exec(vitest, ['run', ...VITEST_ROOM, file.name], project)
      if (ran.code !== 1) return [`vitest exited ${ran.code}, not 1:`, ...tail(ran, 40)]
      const missing = (examples.failures.get(file.name) ?? []).filter((line) => !ran.output.includes(line))
      return missing.length === 0
        ? []
        : ['the output lacks these documented lines:', ...missing, 'it printed:', ...tail(ran, 40)]
    })
  }
}
