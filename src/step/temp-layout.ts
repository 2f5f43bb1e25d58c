/**
 * Where a bash step's spilled values and large script travel, shared by the
 * code that opens them and the code that predicts the argv and preamble
 * sizes.
 *
 * Both travel as file descriptors appended after the step's stdio slots:
 * the values (all spilled values, concatenated in the plan's order) at the
 * first free slot, the script (only when it is over 64 KiB) at the next.
 * With the default three stdio slots that is fd 3 and fd 4. No path is part
 * of the argv or the preamble, so their sizes do not depend on TMPDIR.
 *
 * Only when neither memfd_create (the addon) nor O_TMPFILE is available is a
 * name created at all: `<TMPDIR>/.exactspawn-<random>`, opened with
 * O_CREAT|O_EXCL|O_NOFOLLOW and unlinked before a byte is written.
 */
import type { StdioSlot } from "../spawn/engine.js";
import type { StdioOption } from "../spawn/spawn-options.js";

/** The prefix of the short-lived name of the last-resort spill file. */
export const UNLINKED_FILE_PREFIX = ".exactspawn-";

/** The descriptor numbers a step's child receives. */
export interface SpillSlots {
  /** The values descriptor, when something was spilled. */
  readonly values: number | undefined;
  /** The script descriptor, when the script is over 64 KiB. */
  readonly script: number | undefined;
}

/**
 * The step's stdio as an explicit slot list, as spawn would normalise it
 * (default: stdin "ignore", stdout and stderr "pipe"; a string repeated for
 * 0–2; an array padded to three with "ignore"). Spawn still validates it.
 */
export function stdioSlots(stdio: StdioSlot | readonly StdioOption[] | undefined): StdioOption[] {
  if (stdio === undefined) return ["ignore", "pipe", "pipe"];
  if (!Array.isArray(stdio)) return [stdio as StdioSlot, stdio as StdioSlot, stdio as StdioSlot];
  const slots = [...(stdio as readonly StdioOption[])];
  while (slots.length < 3) slots.push("ignore");
  return slots;
}

/** The first descriptor after `stdio`'s slots. */
export function firstSpillSlot(stdio: StdioSlot | readonly StdioOption[] | undefined): number {
  return stdioSlots(stdio).length;
}

/** Which descriptor numbers the values and the script get, from the first free slot `base`. */
export function spillSlots(base: number, hasValues: boolean, hasScript: boolean): SpillSlots {
  return {
    values: hasValues ? base : undefined,
    script: hasScript ? base + (hasValues ? 1 : 0) : undefined,
  };
}
