/**
 * spawnSync runs the end-of-run table (timeout-policy.table.ts), which
 * timeout-policy-spawn.test.ts runs through spawn with the same
 * expectations. Native engine only: child_process.spawnSync has no kill
 * grace and no group kill (docs/fallback.md).
 */
import { afterEach, describe, it } from "vitest";
import { nativeStatus, spawnSync } from "../../src/index.js";
import { expectOutcome, killLeftBehind, TIMEOUT_CASES } from "./timeout-policy.table.js";

afterEach(killLeftBehind);

describe.runIf(nativeStatus().loaded)("the end-of-run policy through spawnSync", () => {
  it.each(TIMEOUT_CASES)("$name", async (testCase) => {
    let outcome: unknown;
    try {
      outcome = spawnSync("/bin/sh", ["-c", testCase.script], testCase.options);
    } catch (error) {
      outcome = error;
    }
    await expectOutcome(testCase, outcome);
  });
});
