/**
 * What a runtime does when untrusted input (context keys, step values) will
 * not reach a child — an invalid or reserved name, an unsupported value, no
 * room in the budget, beyond maxUntrustedKeys: never nothing.
 *   - "report" (the default): one WARN event per reason (`step.skipped`:
 *     the count and the first NOTICE_NAMES names, never a value), through
 *     the step's logger, so it carries the step and its correlation id; the
 *     step's result (and `explain`) list every one.
 *   - "throw": the child is not started; UntrustedSkipError names them.
 * Used by runtime.bash and runtime.spawn alike, after planning and before
 * anything starts.
 */
import { displayName, type SkippedName, UntrustedSkipError } from "../errors.js";
import { type Logger, logger } from "../log.js";

export type UntrustedSkips = "report" | "throw";

/** Throws TypeError unless `value` is "report" or "throw" (or undefined: "report"). */
export function untrustedSkipsOption(value: unknown, where: string): UntrustedSkips {
  if (value === undefined || value === "report" || value === "throw") return value ?? "report";
  throw new TypeError(`${where}: options.untrustedSkips must be "report" or "throw"`);
}

/** How many names a summary event lists; its count covers the rest. */
export const NOTICE_NAMES = 10;

/** One event per reason: `event`, `reason`, `count`, the first names (escaped), and `bytes` when known. */
export function logByReason(
  log: Logger,
  event: string,
  entries: readonly { readonly name: string; readonly reason: string; readonly bytes?: number }[],
  message: string,
): void {
  const byReason = new Map<string, { count: number; bytes: number; names: string[] }>();
  for (const { name, reason, bytes } of entries) {
    let group = byReason.get(reason);
    if (group === undefined) {
      group = { count: 0, bytes: 0, names: [] };
      byReason.set(reason, group);
    }
    group.count += 1;
    group.bytes += bytes ?? 0;
    if (group.names.length < NOTICE_NAMES) group.names.push(displayName(name));
  }
  for (const [reason, { count, bytes, names }] of byReason) {
    log.warn({ event, reason, count, ...(bytes > 0 ? { bytes } : {}), names }, message);
  }
}

/** Applies the runtime's policy to `skipped` (see the module comment); nothing when empty. */
export function handleUntrustedSkips(
  skipped: readonly SkippedName[],
  mode: UntrustedSkips | undefined,
  log: Logger | undefined,
  where: string,
): void {
  if (skipped.length === 0) return;
  if (mode === "throw") throw new UntrustedSkipError(where, skipped);
  logByReason(
    log ?? logger(),
    "step.skipped",
    skipped,
    `${where}: untrusted input skipped, not exported to the child`,
  );
}

/** One `step.dropped` event per reason for trusted variables left out to fit (names and sizes). */
export function reportDrops(
  log: Logger,
  dropped: readonly { readonly name: string; readonly reason: string; readonly bytes: number }[],
): void {
  if (dropped.length === 0) return;
  logByReason(log, "step.dropped", dropped, "variables left out to fit the exec limit");
}

/** One DEBUG `step.spilled` event for the step values passed through a descriptor (names and sizes). */
export function reportSpills(
  log: Logger,
  spilled: readonly { readonly name: string; readonly bytes: number }[],
): void {
  if (spilled.length === 0) return;
  const bytes = spilled.reduce((sum, s) => sum + s.bytes, 0);
  log.debug(
    {
      event: "step.spilled",
      count: spilled.length,
      bytes,
      names: spilled.slice(0, NOTICE_NAMES).map((s) => displayName(s.name)),
    },
    "step values passed through a private descriptor",
  );
}
