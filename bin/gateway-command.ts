// `cachelab gateway CLIENT_CAPTURE UPSTREAM_CAPTURE [--out DIR]`: both sides of a gateway, recorded with
// --record-bodies, as two run folders — DIR/direct (the client's requests sent straight to the provider,
// simulated: the baseline) and DIR/gateway (what the gateway sent upstream) — and DIR/changes.csv, so
// `cachelab check --baseline DIR/direct --out DIR/gateway` gates the gateway against the direct route.

import { writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { CachelabError } from '../harness/errors.ts'
import { changeCell, changesCsv, GATEWAY_SCENARIO, gatewayFromCaptures } from '../reports/gateway.ts'
import { gatewayNotes } from '../reports/gateway-changes.ts'
import { summaryTable, wantsColour } from '../reports/table.ts'
import { writeRunFiles } from '../scenarios/run-files.ts'
import { parse } from './args.ts'
import { GATEWAY_FLAGS } from './commands.ts'

export async function gatewayCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, GATEWAY_FLAGS, true)
  const [clientDir, upstreamDir] = positionals
  if (clientDir === undefined || upstreamDir === undefined || positionals.length !== 2)
    throw new CachelabError(
      'usage',
      `gateway needs two capture directories, got ${positionals.length}: cachelab gateway CLIENT_CAPTURE UPSTREAM_CAPTURE [--out DIR]`,
    )
  const routes = gatewayFromCaptures(
    clientDir,
    upstreamDir,
    { runId: 'gateway', scenario: GATEWAY_SCENARIO },
    (where) => process.stderr.write(`cachelab gateway: ${where}: torn last line (not read)\n`),
  )
  const outDir = resolve(values.out ?? 'reports/out/gateway')
  const colour = wantsColour(process.stdout, process.env)
  const lines: string[] = []
  const changes = changesCsv(routes)
  for (const [name, rows] of [
    ['direct', routes.direct],
    ['gateway', routes.gateway],
  ] as const) {
    const { summaries } = writeRunFiles(join(outDir, name), {
      runId: `gateway-${name}`,
      rows,
      scenarios: [],
      writer: 'report',
      // The gateway route carries its changes, so `check` on it names what no row's numbers show.
      ...(name === 'gateway' ? { files: { 'changes.csv': changes } } : {}),
    })
    lines.push(`${name} route:`, summaryTable(summaries, { colour }), '')
  }
  writeFileSync(join(outDir, 'changes.csv'), changes)
  const noted = gatewayNotes(routes.pairs.map(({ pair }) => changeCell(pair.changes)))
  const where = relative(process.cwd(), outDir) || '.'
  const changed = routes.pairs.filter((pair) => pair.pair.changes.length > 0).length
  lines.push(
    ...noted,
    `${routes.pairs.length} pairs (${changed} changed across the gateway, ${routes.unpaired.length} client requests unpaired); wrote ${where}/{direct,gateway}/ and ${where}/changes.csv`,
    `gate it: cachelab check --baseline ${where}/direct --out ${where}/gateway`,
  )
  process.stdout.write(`${lines.join('\n')}\n`)
  return 0
}
