/**
 * Issue 29 item 5: quiet logs. A step with a 5,000-key hostile context
 * writes one event per reason (a count and the first ten names), each
 * carrying the step and its correlation id; the full list stays in the
 * result (and `explain`). Before: one 47 KB warning naming every skipped key,
 * and warnings without a step id.
 */
import { describe, expect, it } from "vitest";
import { createRuntime } from "../../src/runtime.js";
import { captureLog } from "../helpers/capture-log.js";

const parentEnv = { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: "/home/agent" };

function hostileContext(): Record<string, string> {
  const context: Record<string, string> = {};
  for (let i = 0; i < 5000; i++) context[`key_${String(i).padStart(4, "0")}`] = `v${i}`;
  context["bad key"] = "x";
  context["ld_preload"] = "/tmp/evil.so";
  context["x".repeat(300)] = "long name";
  context["task_description"] = "fix the bug";
  return context;
}

describe("one event per step and reason", () => {
  it.each(["bash", "spawn"] as const)(
    "runtime.%s: counts and ten names, every event tagged",
    async (kind) => {
      const log = captureLog();
      const runtime = createRuntime({ parentEnv, inherit: "essentials", logger: log.logger });
      const context = hostileContext();
      const result =
        kind === "bash"
          ? await runtime.bash("true", { context, step: "s1", correlationId: "run-1" })
          : await runtime.spawn("true", [], { context, step: "s1", correlationId: "run-1" });
      const events = log.events();
      // Every event of the call carries its step and correlation id.
      for (const event of events) {
        expect(event).toMatchObject({ step: "s1", correlationId: "run-1" });
      }
      const notices = events.filter((e) => e["level"] === 40);
      const keys = notices.map((e) => `${e["event"]}/${e["reason"]}`);
      expect(new Set(keys).size).toBe(keys.length);
      for (const notice of notices) {
        expect(notice["event"]).toMatch(/^step\.(skipped|dropped)$/);
        expect(typeof notice["count"]).toBe("number");
        expect((notice["names"] as string[]).length).toBeLessThanOrEqual(10);
      }
      const reasons = Object.fromEntries(notices.map((e) => [e["reason"], e["count"]]));
      // 5,003 valid keys over the default bound of 4,096; "bad key" is no identifier.
      expect(reasons).toMatchObject({ too_many_keys: 907, invalid_identifier: 1 });
      const skipped = (result as { skipped?: readonly { reason: string }[] }).skipped;
      if (skipped !== undefined) {
        expect(skipped.filter((s) => s.reason === "too_many_keys")).toHaveLength(907);
      }
      const bytes = log.lines.reduce((sum, line) => sum + line.length, 0);
      expect(bytes).toBeLessThan(8 * 1024);
    },
  );
});
