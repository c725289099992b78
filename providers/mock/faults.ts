// The queue of faults the mock providers inject on demand, each the way the real API fails (see the
// `Fault` type): an HTTP error with the provider's body and retry headers, a stream cut mid-way, or an
// error event inside a 200 stream.

import type { Fault } from '../../harness/types.ts'

export type { Fault }

/** Faults queued for the next requests, in order. */
export class FaultQueue {
  private readonly queue: Fault[] = []

  push(...faults: Fault[]): void {
    this.queue.push(...faults)
  }

  take(): Fault | undefined {
    return this.queue.shift()
  }

  /** The fault the next `take` returns, left queued. */
  peek(): Fault | undefined {
    return this.queue[0]
  }

  get pending(): number {
    return this.queue.length
  }

  clear(): void {
    this.queue.length = 0
  }
}
