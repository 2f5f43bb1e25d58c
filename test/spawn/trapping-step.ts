/**
 * A step that traps SIGTERM, records it, cleans up (a 0.3 s wait, well
 * inside a grace of 60 s) and exits 3: what it prints and its own exit show
 * that the grace was given (kill-grace*.test.ts).
 */
import { spawn } from "../../src/index.js";

export const TRAPPING =
  "trap 'echo term; sleep 0.3; echo cleaned; exit 3' TERM; echo ready; while :; do sleep 0.05; done";

/** Printed by a step that got SIGTERM and had its grace. */
export const GRACE_GIVEN = "ready\nterm\ncleaned\n";

/** The step, aborted once it said it is ready (its trap is set). */
export async function abortedOnceReady(): Promise<ReturnType<typeof spawn>> {
  const abort = new AbortController();
  const child = spawn("/bin/sh", ["-c", TRAPPING], {
    signal: abort.signal,
    killGraceMs: 60_000,
    reject: false,
    stdio: ["ignore", "pipe", "ignore"],
  });
  for await (const line of child.lines()) {
    if (line === "ready") break;
  }
  abort.abort();
  return child;
}
