/**
 * spawn runs the end-of-run table (timeout-policy.table.ts), which
 * timeout-policy-sync.test.ts runs through spawnSync with the same
 * expectations. Native engine only: the child_process fallback cannot
 * signal a group at the leader's exit (docs/fallback.md).
 */
import { afterEach, describe, it } from "vitest";
import { nativeStatus, spawn } from "../../src/index.js";
import { expectOutcome, killLeftBehind, TIMEOUT_CASES } from "./timeout-policy.table.js";

afterEach(killLeftBehind);

describe.runIf(nativeStatus().loaded)("the end-of-run policy through spawn", () => {
  it.each(TIMEOUT_CASES)("$name", async (testCase) => {
    const outcome = await spawn("/bin/sh", ["-c", testCase.script], testCase.options).then(
      (result) => result,
      (error: unknown) => error,
    );
    await expectOutcome(testCase, outcome);
  });
});
