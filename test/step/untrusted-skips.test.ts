/**
 * Untrusted input is never dropped in silence (issue 20, item 4): a context
 * that is not a record or Map is a TypeError like a wrong-typed `values`; a
 * skipped untrusted entry (here "my-key", whose name cannot be exported, or
 * an entry given up for the budget) is logged at WARN by name (never value)
 * and listed in the result, or, with `untrustedSkips: "throw"`, stops the
 * step before it starts with UntrustedSkipError naming it.
 *
 * Seen red on the old code: `context: 42` and `"abc"` exported nothing and
 * resolved; "my-key" was only in result.skipped (no WARN naming it);
 * untrustedSkips was an unknown option. The per-reason event sums the
 * bytes of every entry (red with `+=` turned into `=`: row log-bytes-summed).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { UntrustedSkipError } from "../../src/errors.js";
import { createRuntime } from "../../src/runtime.js";
import { logByReason, NOTICE_NAMES } from "../../src/step/untrusted-skips.js";
import { captureLog } from "../helpers/capture-log.js";

const parentEnv = { PATH: process.env["PATH"] ?? "/usr/bin:/bin" };
const SECRET = "sk-untrusted-skip-sentinel-81e2";
const dir = mkdtempSync(join(tmpdir(), "exactspawn-skips-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("context must be a record or a Map", () => {
  const runtime = createRuntime({ parentEnv, logger: pino({ level: "silent" }) });
  for (const context of [42, "abc", null, true, ["a"]]) {
    it(`context: ${JSON.stringify(context)} is a TypeError everywhere`, async () => {
      // The types refuse it too (ContextInput): the casts play an untyped caller.
      // Thrown synchronously, as every bad call is (docs/spawn.md, "Errors").
      expect(() => runtime.bash("true", { context } as never)).toThrow(
        /options\.context must be a record or a Map/,
      );
      expect(() => runtime.planBash("true", { context } as never)).toThrow(TypeError);
      expect(() => runtime.spawn("true", [], { context } as never)).toThrow(TypeError);
      expect(() => runtime.buildEnv({ context } as never)).toThrow(TypeError);
    });
  }
  it("records and Maps are accepted", () => {
    expect(runtime.planBash("true", { context: { a: "1" } }).layered.env.get("CTX_A")).toBe("1");
    expect(
      runtime.planBash("true", { context: new Map([["a", "2"]]) }).layered.env.get("CTX_A"),
    ).toBe("2");
  });
});

describe('untrustedSkips: "report" (the default)', () => {
  it("logs one WARN per reason naming the skipped variables, never a value, and lists them in the result", async () => {
    const log = captureLog();
    const runtime = createRuntime({ parentEnv, logger: log.logger });
    const result = await runtime.bash("true", {
      values: { "my-key": SECRET, ok: "fine" },
      context: { "bad key": SECRET },
    });
    expect(result.exitCode).toBe(0);
    expect(result.skipped.map((s) => s.name)).toEqual(
      expect.arrayContaining(["RECIPE_VAR_my-key", "CTX_BAD KEY"]),
    );
    const events = log.events().filter((e) => e["event"] === "step.skipped");
    expect(events.map((e) => e["reason"])).toEqual(["invalid_identifier"]);
    expect(events[0]!["level"]).toBe(40);
    expect(events[0]!["count"]).toBe(2);
    const named = events[0]!["names"] as string[];
    expect(named).toEqual(expect.arrayContaining(["RECIPE_VAR_my-key", "CTX_BAD KEY"]));
    for (const line of log.lines) expect(line).not.toContain(SECRET);
  });

  it("runtime.spawn logs its skips too", async () => {
    const log = captureLog();
    const runtime = createRuntime({ parentEnv, logger: log.logger });
    await runtime.spawn("true", [], { context: { "bad key": SECRET } });
    const events = log.events().filter((e) => e["event"] === "step.skipped");
    expect(events).toHaveLength(1);
    for (const line of log.lines) expect(line).not.toContain(SECRET);
  });
});

describe('untrustedSkips: "throw"', () => {
  const runtime = createRuntime({
    parentEnv,
    logger: pino({ level: "silent" }),
    untrustedSkips: "throw",
  });

  it("refuses the step before it starts, naming every skipped variable", async () => {
    const marker = join(dir, "ran");
    const error = await runtime
      .bash(`touch ${marker}`, { values: { "my-key": SECRET, also: "x" }, context: { "a b": "y" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UntrustedSkipError);
    expect(error).toMatchObject({ code: "ERR_EXACTSPAWN_UNTRUSTED_SKIP" });
    const skipped = (error as UntrustedSkipError).skipped.map((s) => s.name);
    expect(skipped).toEqual(expect.arrayContaining(["RECIPE_VAR_my-key", "CTX_A B"]));
    expect((error as Error).message).toContain("RECIPE_VAR_my-key");
    expect((error as Error).message).not.toContain(SECRET);
    expect(existsSync(marker)).toBe(false);
  });

  it("a budget skip is refused as well", async () => {
    const limits = { execLimit: 64 * 1024, maxArgStrlen: 131_072 };
    const context = { big1: "x".repeat(40_000), big2: "y".repeat(40_000) };
    await expect(runtime.bash("true", { context, limits })).rejects.toMatchObject({
      skipped: [{ name: "CTX_BIG1", reason: "aggregate_env_budget" }],
    });
  });

  it("runtime.spawn rejects before anything starts (what the run meets rejects: docs/spawn.md)", async () => {
    const child = runtime.spawn("true", [], { context: { "a b": "y" } });
    expect(child.pid).toBeUndefined();
    await expect(child.result).rejects.toBeInstanceOf(UntrustedSkipError);
  });

  it("nothing skipped: the step runs", async () => {
    const result = await runtime.bash('printf %s "$RECIPE_VAR_ok"', { values: { ok: "fine" } });
    expect(result.stdout).toBe("fine");
  });

  it("the option is validated", () => {
    expect(() => createRuntime({ untrustedSkips: "ignore" as "throw" })).toThrow(
      /untrustedSkips must be "report" or "throw"/,
    );
  });
});

describe("one WARN per reason", () => {
  it("counts every entry of a reason and sums their bytes; names stop at NOTICE_NAMES", () => {
    const captured = captureLog();
    const entries = [
      ...Array.from({ length: NOTICE_NAMES + 2 }, (_, i) => ({
        name: `BIG_${i}`,
        reason: "over_cap",
        bytes: 100 + i,
      })),
      { name: "odd-name", reason: "invalid_name" },
      { name: "ANOTHER", reason: "over_cap", bytes: 1000 },
    ];
    logByReason(captured.logger, "env.skipped", entries, "skipped");
    const events = captured.events();
    expect(events).toHaveLength(2);
    const overCap = events.find((e) => e["reason"] === "over_cap")!;
    const expectedBytes =
      1000 + Array.from({ length: NOTICE_NAMES + 2 }, (_, i) => 100 + i).reduce((a, b) => a + b);
    expect(overCap).toMatchObject({
      event: "env.skipped",
      count: NOTICE_NAMES + 3,
      bytes: expectedBytes,
    });
    expect(overCap["names"]).toHaveLength(NOTICE_NAMES);
    const invalid = events.find((e) => e["reason"] === "invalid_name")!;
    expect(invalid).toMatchObject({ count: 1, names: ["odd-name"] });
    expect(invalid).not.toHaveProperty("bytes");
  });
});
