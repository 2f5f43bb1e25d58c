/**
 * The kill grace (docs/spawn.md: `killGraceMs`): an ending sends
 * `killSignal` first, and SIGKILL only once the grace has passed, so a step
 * that traps the signal can clean up (trapping-step.ts: the events it prints
 * and its own exit are the proof, not a time). Native engine; the
 * child_process fallback's timers are kill-grace-fallback.test.ts.
 *
 * Seen red with SIGKILL sent right after the first signal by the addon's
 * deadline keeper (row kill-grace-keeper), by spawnSync's loop (row
 * kill-grace-sync) and with the plan's grace 0 (row kill-grace-plan).
 */
import { describe, expect, it } from "vitest";
import { nativeStatus, spawn, spawnSync } from "../../src/index.js";
import { abortedOnceReady, GRACE_GIVEN, TRAPPING } from "./trapping-step.js";

/** A 1 s timeout, a grace long enough for the trap's clean-up, its output read. */
const TIMED_OUT = {
  timeout: 1000,
  killGraceMs: 60_000,
  reject: false,
  stdio: ["ignore", "pipe", "ignore"],
} as const;

describe.runIf(nativeStatus().loaded)("the kill grace (native engine)", () => {
  it("spawn, aborted: the step gets SIGTERM, cleans up within the grace, exits on its own", async () => {
    const result = await abortedOnceReady();
    expect(result).toMatchObject({ failure: "abort", exitCode: 3, signal: null });
    expect(result.stdout).toBe(GRACE_GIVEN);
  });

  it("spawn, timed out: the same", async () => {
    // The trap is set first thing: the timeout (1 s) finds it set.
    const result = await spawn("/bin/sh", ["-c", TRAPPING], TIMED_OUT);
    expect(result).toMatchObject({ failure: "timeout", exitCode: 3, signal: null });
    expect(result.stdout).toBe(GRACE_GIVEN);
  });

  it("spawnSync, timed out: the same", () => {
    const result = spawnSync("/bin/sh", ["-c", TRAPPING], TIMED_OUT);
    expect(result).toMatchObject({ failure: "timeout", exitCode: 3, signal: null });
    expect(result.stdout).toBe(GRACE_GIVEN);
  });
});
