import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  examplesProblems,
  installedPackages,
  packProblems,
  publishWarnings,
  REQUIRED_PACK_FILES,
  readmeExamples,
  unaskedPeers,
} from './pack-checks.ts'

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

describe('installedPackages and unaskedPeers', () => {
  const tree = {
    dependencies: {
      cachelab: {
        version: '0.1.0',
        dependencies: {
          msw: { version: '2.15.0' },
          openai: { missing: true },
          '@anthropic-ai/sdk': {
            version: '1.14.0',
            dependencies: { 'json-schema-to-ts': { version: '3.1.1' } },
          },
        },
      },
      vitest: { version: '4.1.12', dependencies: { vite: { version: '8.3.8' } } },
      // Deduped here, listed in full under a later package.
      '@vitest/browser': { version: '4.1.12', dependencies: { '@vitest/mocker': { version: '4.1.12' } } },
      '@vitest/mocker': { version: '4.1.12', dependencies: { 'magic-string': { version: '0.30.21' } } },
    },
  }

  it('lists every installed package of an npm ls tree once, deduped entries’ dependencies included, leaving the missing ones out', () => {
    expect(installedPackages(tree)).toEqual([
      '@anthropic-ai/sdk@1.14.0',
      '@vitest/browser@4.1.12',
      '@vitest/mocker@4.1.12',
      'cachelab@0.1.0',
      'json-schema-to-ts@3.1.1',
      'magic-string@0.30.21',
      'msw@2.15.0',
      'vite@8.3.8',
      'vitest@4.1.12',
    ])
  })

  it('names the client libraries, DSH’s packages and better-sqlite3 among them, and nothing else', () => {
    expect(
      unaskedPeers([
        '@anthropic-ai/sdk@1.14.0',
        '@ai-sdk/provider@3.0.18',
        '@deepseek-ai/cordis@4.0.4',
        '@langchain/core@1.4.0',
        '@openai/agents-core@0.14.3',
        'ai@6.0.325',
        'better-sqlite3@12.11.1',
        'openai@6.49.0',
        '@google/genai@2.32.0',
        '@aws-sdk/client-bedrock-runtime@3.1164.0',
        '@mariozechner/pi-ai@0.73.1',
        'msw@2.15.0',
        'aider@1.0.0',
        '@aws-sdk/types@3.1.0',
        'openai-like@1.0.0',
      ]),
    ).toEqual([
      '@anthropic-ai/sdk@1.14.0',
      '@ai-sdk/provider@3.0.18',
      '@deepseek-ai/cordis@4.0.4',
      '@langchain/core@1.4.0',
      '@openai/agents-core@0.14.3',
      'ai@6.0.325',
      'better-sqlite3@12.11.1',
      'openai@6.49.0',
      '@google/genai@2.32.0',
      '@aws-sdk/client-bedrock-runtime@3.1164.0',
      '@mariozechner/pi-ai@0.73.1',
    ])
  })
})

describe('publishWarnings', () => {
  it('keeps what npm publish --dry-run warns about the package, not the missing login', () => {
    const output = [
      'npm notice 📦  cachelab@0.1.0',
      'npm warn publish npm auto-corrected some errors in your package.json when publishing.',
      'npm warn publish "bin[cachelab]" script name was cleaned',
      'npm warn publish This command requires you to be logged in to https://registry.npmjs.org/ (dry-run)',
      '+ cachelab@0.1.0',
    ].join('\n')
    expect(publishWarnings(output)).toEqual([
      'npm warn publish npm auto-corrected some errors in your package.json when publishing.',
      'npm warn publish "bin[cachelab]" script name was cleaned',
    ])
  })

  it('finds none in a clean dry run', () => {
    expect(publishWarnings('npm notice Tarball Details\n+ cachelab@0.1.0\n')).toEqual([])
  })
})
