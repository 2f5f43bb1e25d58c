/**
 * The kill grace on the child_process fallback engine (its JavaScript
 * timers, src/spawn/js-ending.ts): SIGTERM first, SIGKILL only after the
 * grace (trapping-step.ts). This file runs in its own worker, so turning the
 * addon off here leaves the other files alone.
 *
 * Seen red with the fallback's SIGKILL timer set to 0 (row kill-grace-fallback).
 * Once the grace has passed, the output is cut at the leader's exit though a
 * daemon it started still holds the pipe: red with the grace's end not
 * recorded (row output-cut-after-grace: the run waited for the daemon).
 */
import { afterEach, describe, expect, it } from "vitest";
import { nativeStatus, spawn } from "../../src/index.js";
import { LeftBehind } from "../fixtures/process-state.js";
import { useQuietFallback } from "../helpers/quiet-fallback.js";
import { abortedOnceReady, GRACE_GIVEN } from "./trapping-step.js";

useQuietFallback();

const daemons = new LeftBehind();
afterEach(() => daemons.killAll());

describe("the kill grace (fallback engine)", () => {
  it("is in use", () => {
    expect(nativeStatus().loaded).toBe(false);
  });

  it("spawn, aborted: the step gets SIGTERM, cleans up within the grace, exits on its own", async () => {
    const result = await abortedOnceReady();
    expect(result).toMatchObject({ failure: "abort", exitCode: 3, signal: null });
    expect(result.stdout).toBe(GRACE_GIVEN);
  });

  it("after the grace, the output ends at the leader's exit though a daemon holds the pipe", async () => {
    const run = spawn(
      "/bin/sh",
      ["-c", "trap '' TERM; setsid sleep 1000 & echo $!; while :; do sleep 0.05; done"],
      { timeout: 300, killGraceMs: 300, reject: false },
    );
    const result = await run;
    daemons.add(Number(result.stdout.trim()));
    expect(result).toMatchObject({ failure: "timeout", signal: "SIGKILL" });
    expect(result.stdout).toMatch(/^\d+\n$/);
  }, 60_000);
});
