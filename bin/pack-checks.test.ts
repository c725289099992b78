import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { examplesProblems, packProblems, REQUIRED_PACK_FILES, readmeExamples } from './pack-checks.ts'

describe('packProblems', () => {
  it('accepts a tarball of the built entry points, their declarations, the launcher, README and license', () => {
    expect(packProblems([...REQUIRED_PACK_FILES, 'dist/harness/loop.js', 'dist/harness/loop.d.ts'])).toEqual(
      [],
    )
  })

  it('names each required file that is missing', () => {
    const files = REQUIRED_PACK_FILES.filter(
      (file) => file !== 'dist/reports/vitest.d.ts' && file !== 'LICENSE',
    )
    expect(packProblems(files)).toEqual(['missing: LICENSE', 'missing: dist/reports/vitest.d.ts'])
  })

  it('names tests, sources, CI files, notes, baselines and run output', () => {
    const unwanted = [
      'reports/vitest.test.ts',
      'dist/reports/vitest.test.js',
      'dist/reports/testing.js',
      'bin/cli.ts',
      '.ci/run',
      'notes/2026-11-30-publishable-package.md',
      'reports/baselines/summary.csv',
      'reports/out/latest/steps.csv',
      'providers/sim/testdata/openai-2006.jsonl',
      'tsconfig.build.json',
      'dist/bin/api.js.map',
    ]
    expect(packProblems([...REQUIRED_PACK_FILES, ...unwanted])).toEqual([
      'unwanted (a test): reports/vitest.test.ts',
      'unwanted (a test): dist/reports/vitest.test.js',
      'unwanted (a test helper): dist/reports/testing.js',
      'unwanted (TypeScript source): bin/cli.ts',
      'unwanted (CI files): .ci/run',
      'unwanted (a design note): notes/2026-11-30-publishable-package.md',
      'unwanted (a baseline): reports/baselines/summary.csv',
      'unwanted (run output): reports/out/latest/steps.csv',
      'unwanted (test data): providers/sim/testdata/openai-2006.jsonl',
      'unwanted (build configuration): tsconfig.build.json',
      'unwanted (a build artifact): dist/bin/api.js.map',
    ])
  })
})

describe('readmeExamples', () => {
  const markdown = [
    'Some prose.',
    '```ts file=good.test.ts',
    "import { run } from 'cachelab'",
    '```',
    '```sh',
    'npm i -D cachelab',
    '```',
    '```ts file=bad.test.ts fails',
    'expect(rows).toHaveNoBreakAbove(1024)',
    '```',
    '```text failure=bad.test.ts',
    'expected no break',
    '  a · b · c 3.1: system-replace at system[0]',
    '```',
  ].join('\n')

  it('takes the fences marked file=NAME as test files, and fails as the negative case', () => {
    const { files } = readmeExamples(markdown)
    expect(files).toEqual([
      { name: 'good.test.ts', code: "import { run } from 'cachelab'\n", fails: false },
      { name: 'bad.test.ts', code: 'expect(rows).toHaveNoBreakAbove(1024)\n', fails: true },
    ])
  })

  it('takes a failure=NAME fence as the lines that case prints, trimmed', () => {
    expect(readmeExamples(markdown).failures.get('bad.test.ts')).toEqual([
      'expected no break',
      'a · b · c 3.1: system-replace at system[0]',
    ])
  })

  it('reports a failing case whose output is not documented', () => {
    const undocumented = markdown.slice(0, markdown.indexOf('```text'))
    expect(examplesProblems(readmeExamples(undocumented))).toEqual([
      'bad.test.ts is marked fails but no failure=bad.test.ts fence shows what it prints',
    ])
  })

  it("finds in this repository's docs/library.md a passing example and a documented negative case", () => {
    const readme = readFileSync(new URL('../docs/library.md', import.meta.url), 'utf8')
    const examples = readmeExamples(readme)
    expect(examplesProblems(examples)).toEqual([])
    expect(examples.files.filter((file) => file.fails)).not.toHaveLength(0)
  })
})
