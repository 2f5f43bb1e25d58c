/**
 * Durations on the command line: `300ms`, `1.5s`, `2m`, `1h`, or a bare
 * number, which is seconds (as `timeout(1)` and every earlier release of
 * this command read it). The library's own options are milliseconds, so a
 * bare number here is a trap for whoever comes from the API: a bare number
 * of 1000 or more (over 16 minutes) is refused with the spelling that was
 * probably meant (`--timeout 30000` → "did you mean 30000ms?"); write the
 * unit (`30000s`) to mean it. Every duration the CLI reads goes through here.
 */
import { UsageError } from "./usage-error.js";

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** A bare number at or above this many seconds is taken for milliseconds written without a unit. */
export const IMPLAUSIBLE_BARE_SECONDS = 1000;

/** The longest duration a timer holds (setTimeout's and the deadline keeper's limit): 2^31 − 1 ms. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/** What the help text says of every duration option. */
export const DURATION_HELP = "300ms, 1.5s, 2m, 1h; a bare number is seconds";

/**
 * Milliseconds for a duration given to `option` (its name, for messages):
 * a positive decimal number with an optional unit (ms, s, m, h), rounded to
 * the millisecond. Throws a UsageError naming the option for anything else:
 * no number, zero or below, a unit it does not know, a bare number of
 * IMPLAUSIBLE_BARE_SECONDS or more, less than 1 ms, more than MAX_DURATION_MS.
 * Pure.
 */
export function parseDuration(text: string, option: string): number {
  const match = /^(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h)?$/.exec(text.trim());
  if (match === null) {
    throw new UsageError(`${option} expects a positive duration (${DURATION_HELP})`);
  }
  const amount = Number(match[1]);
  const unit = match[2] as keyof typeof UNIT_MS | undefined;
  if (unit === undefined && amount >= IMPLAUSIBLE_BARE_SECONDS) {
    throw new UsageError(
      `${option} ${match[1]}: a bare number is seconds (${formatDuration(amount * 1000)}); ` +
        `did you mean ${match[1]}ms? Write ${match[1]}ms, or ${match[1]}s for seconds`,
    );
  }
  const ms = Math.round(amount * UNIT_MS[unit ?? "s"]);
  if (ms < 1) throw new UsageError(`${option} expects a duration of at least 1ms`);
  if (ms > MAX_DURATION_MS) {
    throw new UsageError(
      `${option} is over the longest duration, ${MAX_DURATION_MS}ms (24.8 days)`,
    );
  }
  return ms;
}

/**
 * A duration for people, with its unit always written: "300 ms", "1.5 s",
 * "2 min 30 s", "8 h 20 min". Pure.
 */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(3))} s`;
  const parts: string[] = [];
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = Number(((ms % 60_000) / 1000).toFixed(3));
  if (hours > 0) parts.push(`${hours} h`);
  if (minutes > 0) parts.push(`${minutes} min`);
  if (seconds > 0) parts.push(`${seconds} s`);
  return parts.join(" ");
}
