/**
 * What a runtime does when untrusted input (context keys, step values) will
 * not reach a child — an invalid or reserved name, an unsupported value, no
 * room in the budget, beyond maxUntrustedKeys: never nothing.
 *   - "report" (the default): one WARN event naming every skipped variable
 *     and its reason (never a value); the step's result lists them too.
 *   - "throw": the child is not started; UntrustedSkipError names them.
 * Used by runtime.bash and runtime.spawn alike, after planning and before
 * anything starts.
 */
import { type SkippedName, UntrustedSkipError } from "../errors.js";
import { type Logger, logger } from "../log.js";

export type UntrustedSkips = "report" | "throw";

/** Throws TypeError unless `value` is "report" or "throw" (or undefined: "report"). */
export function untrustedSkipsOption(value: unknown, where: string): UntrustedSkips {
  if (value === undefined || value === "report" || value === "throw") return value ?? "report";
  throw new TypeError(`${where}: options.untrustedSkips must be "report" or "throw"`);
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
  (log ?? logger()).warn(
    {
      skipped: skipped.map(({ name, reason }) => ({ variable: name, reason })),
      count: skipped.length,
    },
    `${where}: untrusted input skipped, not exported to the child`,
  );
}
