/**
 * The budget's log lines never hold a value (issue 21: with a bounded-env
 * WARN changed to print the skipped context value, the suite stayed green,
 * because every budget test ran under a silent logger). Here every kind of
 * budget event is logged at trace level into memory — inherited variables
 * trimmed, context entries and step values skipped for the budget, values
 * spilled, the key bound, the untrusted-skip report — with a sentinel in
 * every value, and no line may contain it.
 *
 * Broken once on purpose (the "untrusted variable skipped" WARN given the
 * value as a field): red. Restored, green.
 */
import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/runtime.js";
import { captureLog } from "../helpers/capture-log.js";

const SENTINEL = "budget-log-sentinel-5d1c";
const limits = { execLimit: 256 * 1024, maxArgStrlen: 131_072 };

function parentEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env["PATH"] ?? "/usr/bin:/bin" };
  for (let i = 0; i < 5; i++) env[`HOST_BLOB_${i}`] = `${SENTINEL}${i}`.padEnd(60_000, "h");
  return env;
}

describe("budget log lines carry names and sizes, never values", () => {
  it("trims, skips, spills and the key bound, at trace level", async () => {
    const log = captureLog();
    const runtime = createRuntime({
      inherit: "all",
      parentEnv: parentEnv(),
      logger: log.logger,
      maxUntrustedKeys: 40,
    });
    const context = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`ctx_${i}`, `${SENTINEL}-c${i}`.padEnd(5_000, "c")]),
    );
    const values = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`v${i}`, `${SENTINEL}-v${i}`.padEnd(3_000, "v")]),
    );
    values["empty"] = "";
    values["bad-name"] = SENTINEL;
    const result = await runtime.bash("true", { context, values, limits });
    expect(result.exitCode).toBe(0);
    const events = log.events();
    const messages = new Set(events.map((e) => String(e["msg"])));
    // The events this test is about did happen.
    expect(result.dropped.length).toBeGreaterThan(0);
    expect(result.skipped.some((s) => s.reason === "aggregate_env_budget")).toBe(true);
    expect(result.skipped.some((s) => s.reason === "too_many_keys")).toBe(true);
    expect(result.spilled.length).toBeGreaterThan(0);
    expect(messages).toContain("variables left out to fit the exec limit");
    expect(messages).toContain("bash: untrusted input skipped, not exported to the child");
    const reasons = events.filter((e) => e["event"] === "step.skipped").map((e) => e["reason"]);
    expect(reasons).toEqual(expect.arrayContaining(["aggregate_env_budget", "too_many_keys"]));
    for (const line of log.lines) expect(line).not.toContain(SENTINEL);
  });
});
