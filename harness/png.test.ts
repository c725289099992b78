import { inflateSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { pngSize } from '../providers/sim/image.ts'
import { syntheticImage, syntheticPng } from './png.ts'

describe('synthetic PNGs', () => {
  it('are valid PNG files of the asked size with decodable pixel data', () => {
    const png = syntheticPng(64, 48, 'a')
    expect(png.subarray(1, 4).toString('ascii')).toBe('PNG')
    expect(pngSize(png.toString('base64'))).toEqual({ width: 64, height: 48 })
    const idatLength = png.readUInt32BE(33)
    expect(inflateSync(png.subarray(41, 41 + idatLength)).length).toBe(48 * (1 + 64 * 3))
  })

  it('differ by seed and are stable for one', () => {
    expect(syntheticImage('x', 32, 32).data).toBe(syntheticImage('x', 32, 32).data)
    expect(syntheticImage('x', 32, 32).data).not.toBe(syntheticImage('y', 32, 32).data)
  })
})
