// The pinned version of an agent, installed with npm into a cache folder once and found there after:
// `<cache>/<package>@<version>/node_modules/.bin/<bin>`. The cache is `CACHELAB_AGENTS_DIR`, else
// `~/.cache/cachelab/agents`; never the project's own node_modules.

import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { CachelabError } from '../../errors.ts'
import type { AgentDriver } from './types.ts'

const run = promisify(execFile)

/** What an install needs of a driver: the package, its pinned version and its command (a gateway has them too). */
export type InstallSpec = Pick<AgentDriver, 'package' | 'version' | 'bin'>

/** The folder installed agents are kept in. */
export function agentsCache(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.CACHELAB_AGENTS_DIR
  return configured !== undefined && configured !== ''
    ? configured
    : join(homedir(), '.cache', 'cachelab', 'agents')
}

/** Where a driver's pinned version is (or will be) installed. */
export function installFolder(driver: InstallSpec, cache = agentsCache()): string {
  return join(cache, `${driver.package.replace('/', '+')}@${driver.version}`)
}

/** A version of an agent as `--agent NAME@VERSION` may ask for it: `latest` is the registry's newest. */
export const LATEST = 'latest'

/**
 * The version the npm registry publishes as `latest` for a package (`npm view PACKAGE version`): what users
 * of the agent run. A registry that cannot be reached is an input error naming the package.
 */
export async function latestVersion(spec: Pick<InstallSpec, 'package'>): Promise<string> {
  try {
    const { stdout } = await run(
      'npm',
      ['view', `${spec.package}@${LATEST}`, 'version', '--loglevel=error'],
      {
        timeout: 120_000,
      },
    )
    const version = stdout.trim().split('\n').at(-1)?.trim() ?? ''
    if (/^\d+\.\d+\.\d+[0-9A-Za-z.+-]*$/.test(version)) return version
    throw new Error(`the registry answered ${JSON.stringify(version)}`)
  } catch (error) {
    const stderr =
      (error as { stderr?: string }).stderr?.trim().split('\n').at(-1) ?? (error as Error).message
    throw new CachelabError('input', `cannot find the latest version of ${spec.package}: ${stderr}`)
  }
}

/**
 * What an npm install that failed says went wrong: its last line of error, not the pointer to its log
 * that npm prints after it (a package's failed install script, such as Kilo's missing platform binary).
 */
export function installError(stderr: string | undefined): string | undefined {
  const lines = (stderr ?? '')
    .trim()
    .split('\n')
    .filter((line) => line.trim() !== '' && !/A complete log of this run can be found in/.test(line))
  return lines.at(-1)?.replace(/^npm error /, '')
}

/** The agent's command, installing its pinned version first when the cache lacks it. */
export async function installedAgent(driver: InstallSpec, cache = agentsCache()): Promise<string> {
  const folder = installFolder(driver, cache)
  const bin = join(folder, 'node_modules', '.bin', driver.bin)
  if (existsSync(bin)) return bin
  // Installed beside its final place and moved there whole, so a half-done install is never found.
  const partial = `${folder}.partial-${process.pid}`
  rmSync(partial, { recursive: true, force: true })
  mkdirSync(partial, { recursive: true })
  try {
    await run(
      'npm',
      [
        'install',
        '--prefix',
        partial,
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        `${driver.package}@${driver.version}`,
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    )
  } catch (error) {
    rmSync(partial, { recursive: true, force: true })
    throw new CachelabError(
      'input',
      `cannot install ${driver.package}@${driver.version}: ${installError((error as { stderr?: string }).stderr) ?? String(error)}`,
    )
  }
  if (!existsSync(folder)) renameSync(partial, folder)
  else rmSync(partial, { recursive: true, force: true })
  return bin
}
