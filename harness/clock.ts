// The virtual clock: scenario time in seconds. Idle gaps, request latency and tool time advance it;
// nothing reads the wall clock in a simulated run.

export class VirtualClock {
  private seconds: number

  constructor(start = 0) {
    this.seconds = start
  }

  now(): number {
    return this.seconds
  }

  advance(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0)
      throw new RangeError(`cannot advance the clock by ${seconds}`)
    this.seconds = roundTime(this.seconds + seconds)
  }
}

/** Round to microseconds so repeated additions stay byte-stable in logs. */
export function roundTime(seconds: number): number {
  return Math.round(seconds * 1e6) / 1e6
}
