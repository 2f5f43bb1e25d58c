/**
 * The kill grace on the child_process fallback engine (its JavaScript
 * timers, src/spawn/js-ending.ts): SIGTERM first, SIGKILL only after the
 * grace (trapping-step.ts). This file runs in its own worker, so turning the
 * addon off here leaves the other files alone.
 *
 * Seen red with the fallback's SIGKILL timer set to 0 (row kill-grace-fallback).
 */
import { describe, expect, it } from "vitest";
import { nativeStatus } from "../../src/index.js";
import { useQuietFallback } from "../helpers/quiet-fallback.js";
import { abortedOnceReady, GRACE_GIVEN } from "./trapping-step.js";

useQuietFallback();

describe("the kill grace (fallback engine)", () => {
  it("is in use", () => {
    expect(nativeStatus().loaded).toBe(false);
  });

  it("spawn, aborted: the step gets SIGTERM, cleans up within the grace, exits on its own", async () => {
    const result = await abortedOnceReady();
    expect(result).toMatchObject({ failure: "abort", exitCode: 3, signal: null });
    expect(result.stdout).toBe(GRACE_GIVEN);
  });
});
