// `npm run test:pack`'s bare project: the tarball installed with Vitest alone, where no client library,
// DSH package or better-sqlite3 may come with it, the entry points import and their declarations
// type-check, and a command that needs a missing library asks for it in one line.

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { installedPackages, type NpmTree, unaskedPeers } from './pack-checks.ts'
import {
  ENTRY_EXPORTS,
  emptyProject,
  exec,
  inform,
  listProblems,
  MATCHERS_CLASH,
  megabytes,
  pins,
  repository,
  skipLibCheck,
  step,
  tail,
  VITEST,
} from './pack-run.ts'

/** The bare project's checks, in `bare`, installing `tarball` (undefined when packing failed). */
export function bareProjectChecks(tarball: string | undefined, bare: string): void {
  let bareInstalled = false
  step(`an empty project installs the tarball with ${VITEST} alone`, () => {
    if (tarball === undefined) return ['no tarball']
    emptyProject(bare, 'cachelab-bare')
    const install = exec(
      'npm',
      ['install', '--save-dev', '--prefer-offline', '--no-audit', '--no-fund', tarball, VITEST],
      bare,
    )
    if (install.code !== 0) return ['npm install failed:', ...tail(install)]
    bareInstalled = true
    inform(`node_modules: ${megabytes(join(bare, 'node_modules'))}`)
    return []
  })

  step('npm ls --all there lists no client library, DSH package or better-sqlite3', () => {
    if (!bareInstalled) return ['not installed']
    const listed = exec('npm', ['ls', '--all', '--json'], bare)
    const packages = installedPackages(
      JSON.parse(listed.output.slice(0, listed.output.lastIndexOf('}') + 1)) as NpmTree,
    )
    if (!packages.some((spec) => spec.startsWith('cachelab@')))
      return ['npm ls does not list cachelab:', ...tail(listed)]
    inform(`${packages.length} packages`)
    return unaskedPeers(packages).map((spec) => `installed unasked: ${spec}`)
  })

  step('each entry point imports there, and their declarations type-check with skipLibCheck false', () => {
    if (!bareInstalled) return ['not installed']
    const problems: string[] = []
    for (const [specifier, names] of Object.entries(ENTRY_EXPORTS)) {
      const script = `const m = await import(${JSON.stringify(specifier)}); const missing = ${JSON.stringify(names)}.filter((name) => !(name in m)); if (missing.length > 0) { console.log('missing exports: ' + missing.join(', ')); process.exit(1) }`
      const imported = exec(process.execPath, ['--input-type=module', '-e', script], bare)
      if (imported.code !== 0) problems.push(`import('${specifier}') failed:`, ...tail(imported, 8))
    }
    const uses = [
      "import { run, type StepRow } from 'cachelab'",
      "import { startCachelabMocks } from 'cachelab/msw'",
      "import { cachelabMatchers } from 'cachelab/vitest'",
      '',
      'export const entries = { run, startCachelabMocks, cachelabMatchers }',
      'export type Row = StepRow',
      '',
    ].join('\n')
    writeFileSync(join(bare, 'entries.ts'), uses)
    const config = {
      compilerOptions: {
        target: 'ES2023',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [join(repository, 'node_modules', '@types')],
      },
      files: ['entries.ts'],
    }
    writeFileSync(join(bare, 'tsconfig.json'), `${JSON.stringify(config, null, 2)}\n`)
    const typescript = join(repository, 'node_modules', 'typescript', 'bin', 'tsc')
    const checked = exec(process.execPath, [typescript, '-p', bare], bare)
    if (checked.code !== 0) {
      // Under `--skip-lib-check` (Vitest 5) the one known clash, Vitest 5's `Matchers` type parameters against
      // the ones cachelab/vitest augments, is let through; any other error still fails.
      const errors = checked.output.split('\n').filter((line) => /error TS\d+/.test(line))
      const unknown = skipLibCheck ? errors.filter((line) => !MATCHERS_CLASH.test(line)) : errors
      if (unknown.length > 0 || errors.length === 0) problems.push('tsc failed:', ...tail(checked))
      else inform(`let through under --skip-lib-check: ${errors.length} TS2428 on Vitest's Matchers`)
    }
    return problems
  })

  step('npx cachelab list runs there', () => (bareInstalled ? listProblems(bare) : ['not installed']))

  step('a command that needs a missing library asks for it by name in one line, and exits 2', () => {
    if (!bareInstalled) return ['not installed']
    const asks = [
      {
        argv: ['run', '--scenario', 'append-only', '--provider', 'openai-chat,deepseek'],
        line: `cachelab: run drives scenarios through the openai SDK: npm i -D openai@${pins.openai}`,
      },
      {
        argv: ['run', '--loop', 'dsh', '--scenario', 'append-only', '--provider', 'deepseek'],
        line: `cachelab: --loop dsh needs @deepseek-ai/cordis, which is not installed: npm i -D @deepseek-ai/dsh-agent-loop@${pins['@deepseek-ai/dsh-agent-loop']} @deepseek-ai/dsh-llm-deepseek@${pins['@deepseek-ai/dsh-llm-deepseek']}`,
      },
    ]
    const problems: string[] = []
    for (const ask of asks) {
      const ran = exec('npx', ['--no-install', 'cachelab', ...ask.argv, '--out', join(bare, 'out')], bare)
      const printed = ran.output.trim()
      if (ran.code !== 2 || printed !== ask.line)
        problems.push(
          `cachelab ${ask.argv.join(' ')} exited ${ran.code}, printing:`,
          ...tail(ran, 5),
          `not: ${ask.line}`,
        )
    }
    return problems
  })
}
