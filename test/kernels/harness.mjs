// The guest side's harness (scripts/kernels.mjs boots a kernel and runs test/kernels/run.mjs):
// plain node, one process, no vitest (its worker pool times out starting under TCG). Each check
// prints one `KTEST {"name","status","why","ms"}` line on the serial console; a check that cannot
// run on this kernel throws skip(why).
import assert from "node:assert/strict";
import { release } from "node:os";

/** This kernel's major.minor as a number to compare: 5.10 → 510, 6.1 → 601, 6.12 → 612. */
export const KERNEL = (() => {
  const [major, minor] = release()
    .split(".")
    .map((part) => Number.parseInt(part, 10));
  return major * 100 + minor;
})();

class Skip extends Error {}

/** Ends a check as skipped, with why. */
export function skip(why) {
  throw new Skip(why);
}

const checks = [];

/** Registers a check (a short id, what it shows); `fn` returns an optional note (a figure) or throws. */
export function check(name, title, fn, seconds = 120) {
  checks.push({ name, title, fn, seconds });
}

export { assert };

/** Runs the checks (those named in EXACTSPAWN_KERNEL_ONLY when set); resolves to the exit status. */
export async function runChecks() {
  const only = process.env["EXACTSPAWN_KERNEL_ONLY"]?.split(",").filter(Boolean);
  let failed = 0;
  for (const { name, title, fn, seconds } of checks) {
    if (only && !only.includes(name)) continue;
    const t0 = Date.now();
    let status = "pass";
    let why = null;
    let timer;
    try {
      const note = await Promise.race([
        fn(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no end after ${seconds} s`)), seconds * 1000);
        }),
      ]);
      if (typeof note === "string") why = note;
    } catch (error) {
      if (error instanceof Skip) {
        status = "skip";
        why = error.message;
      } else {
        status = "fail";
        failed++;
        why = String(error?.stack ?? error)
          .split("\n")
          .slice(0, 12)
          .join(" | ");
      }
    } finally {
      clearTimeout(timer);
    }
    process.stdout.write(
      `KTEST ${JSON.stringify({ name, title, status, why, ms: Date.now() - t0 })}\n`,
    );
  }
  return failed === 0 ? 0 : 1;
}
