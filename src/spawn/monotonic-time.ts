/**
 * The addon stamps events with CLOCK_MONOTONIC (milliseconds), the clock
 * behind process.hrtime and performance.now; results report them on the
 * scale of `performance.timeOrigin + performance.now()` (epoch ms), which
 * follows the same clock and so never jumps with the wall clock. Total.
 */
import { performance } from "node:perf_hooks";

/** A CLOCK_MONOTONIC time in ms, as `performance.timeOrigin + performance.now()` was then. */
export function epochOfMonotonic(monotonicMs: number): number {
  return performance.timeOrigin + performanceOfMonotonic(monotonicMs);
}

/** A CLOCK_MONOTONIC time in ms, as `performance.now()` was then. */
export function performanceOfMonotonic(monotonicMs: number): number {
  const nowMonotonic = Number(process.hrtime.bigint()) / 1e6;
  return performance.now() - (nowMonotonic - monotonicMs);
}
