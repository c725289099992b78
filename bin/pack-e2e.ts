// `npm run test:pack`: the package as a user gets it. Packs the tarball (`prepack` builds dist/) and checks
// that `npm publish --dry-run` warns about nothing in it. Installs it with Vitest alone into an empty
// project, where no client library, DSH package or better-sqlite3 may come with it (they are optional
// peers), the entry points import and their declarations type-check, `npx cachelab list` runs, and a
// command that needs a missing library asks for it in one line and exits 2. Then installs it with Vitest,
// Vite and the openai SDK into another empty ESM project and checks there: each entry point imports in
// plain node (and loads through require); the tarball holds only what users need; `npx cachelab list`
// and `run` work without tsx; a user's test files type-check against the declarations; docs/library.md's
// examples run in Vitest, the passing one passing and the negative one failing with the lines that page
// shows. Prints the tarball's unpacked size and each project's node_modules size. Needs the npm registry
// (or npm's cache). Exits 0 when every check holds, 1 otherwise;
// `--keep` keeps the directory; `--peers a@1,b@2` installs other versions beside cachelab (newer majors
// on Node 22+, see notes/2026-11-30-current-node.md) and `--skip-lib-check` type-checks as most projects do.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bareProjectChecks } from './pack-bare.ts'
import { examplesProblems, packProblems, publishWarnings, readmeExamples } from './pack-checks.ts'
import { exec, inform, keep, repository, results, step, tail } from './pack-run.ts'
import { userProjectChecks } from './pack-user.ts'

const root = mkdtempSync(join(tmpdir(), 'cachelab-pack-'))
const examples = readmeExamples(readFileSync(join(repository, 'docs', 'library.md'), 'utf8'))
let tarball: string | undefined

step('docs/library.md has a passing example and a documented negative case', () => examplesProblems(examples))

step('npm pack builds and packs the tarball', () => {
  const packed = exec('npm', ['pack', '--json', '--pack-destination', root], repository)
  if (packed.code !== 0) return ['npm pack failed:', ...tail(packed)]
  const [manifest] = JSON.parse(packed.output.slice(0, packed.output.lastIndexOf(']') + 1)) as Array<{
    filename: string
    size: number
    unpackedSize: number
    files: Array<{ path: string }>
  }>
  if (manifest === undefined) return ['npm pack printed no manifest']
  tarball = join(root, manifest.filename)
  inform(
    `${manifest.filename}: ${(manifest.size / 1e6).toFixed(1)} MB packed, ${(manifest.unpackedSize / 1e6).toFixed(1)} MB unpacked, ${manifest.files.length} files`,
  )
  const problems = packProblems(manifest.files.map((file) => file.path))
  return problems.length === 0 ? [] : ['the tarball holds the wrong files:', ...problems]
})

// The dry run uses the dist/ npm pack just built (its scripts would build it again); it never publishes.
step('npm publish --dry-run exits 0 with no warning about the package', () => {
  const published = exec('npm', ['publish', '--dry-run', '--ignore-scripts'], repository)
  if (published.code !== 0) return [`npm publish --dry-run exited ${published.code}:`, ...tail(published)]
  return publishWarnings(published.output)
})

bareProjectChecks(tarball, join(root, 'bare'))
userProjectChecks(tarball, join(root, 'project'), examples)

if (keep) process.stdout.write(`kept ${root}\n`)
else rmSync(root, { recursive: true, force: true })
const failed = results.filter((result) => result.problems.length > 0).length
process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`)
process.exitCode = failed > 0 ? 1 : 0
