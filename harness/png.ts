// Synthetic PNG screenshots of a given size: real, decodable PNG files whose pixels depend on a seed,
// so each image is distinct and priced by its size like a real upload.

import { crc32, deflateSync } from 'node:zlib'
import { hashString } from './random.ts'
import type { ImageBlock } from './types.ts'

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const checksum = Buffer.alloc(4)
  checksum.writeUInt32BE(crc32(body) >>> 0)
  return Buffer.concat([length, body, checksum])
}

/** A PNG (RGB, 8 bits) of `width` × `height` whose colour bands come from `seed`. */
export function syntheticPng(width: number, height: number, seed: string): Buffer {
  const base = hashString(seed)
  const rowBytes = 1 + width * 3
  const raw = Buffer.alloc(rowBytes * height)
  for (let y = 0; y < height; y += 1) {
    const band = hashString(`${base}:${Math.floor(y / 32)}`)
    const offset = y * rowBytes
    raw[offset] = 0
    for (let x = 0; x < width; x += 1) {
      raw[offset + 1 + x * 3] = band & 0xff
      raw[offset + 2 + x * 3] = (band >>> 8) & 0xff
      raw[offset + 3 + x * 3] = ((band >>> 16) + (x >> 5)) & 0xff
    }
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header[8] = 8
  header[9] = 2
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/** An image block holding a synthetic PNG. */
export function syntheticImage(id: string, width: number, height: number): ImageBlock {
  return {
    type: 'image',
    id,
    mediaType: 'image/png',
    data: syntheticPng(width, height, id).toString('base64'),
    width,
    height,
  }
}
