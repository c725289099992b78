import { describe, expect, it } from 'vitest'
import { byteSize } from '../providers/mock/serve-settings.ts'
import { serveCommand } from './serve-command.ts'

describe('serve size options', () => {
  it('reads sizes in bytes, KiB, MiB and GiB, and refuses anything else', () => {
    expect(byteSize('1000')).toBe(1000)
    expect(byteSize('512k')).toBe(512 * 1024)
    expect(byteSize('32m')).toBe(32 * 1024 * 1024)
    expect(byteSize('1.5GiB')).toBe(1.5 * 1024 ** 3)
    expect(byteSize('lots')).toBeUndefined()
    expect(byteSize('0')).toBeUndefined()
  })

  it('refuses a bad --max-body or --memory-budget before it listens', async () => {
    await expect(serveCommand(['--max-body', 'huge', '--port', '0'])).rejects.toThrow(/--max-body/)
    await expect(serveCommand(['--memory-budget', '1', '--port', '0'])).rejects.toThrow(/--memory-budget/)
  })
})
