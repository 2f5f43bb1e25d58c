/**
 * runtime.spawn (agent-style children) against the real kernel: huge argv
 * strings are refused by index and size, huge prompts go through stdin,
 * inherited variables are trimmed to fit while protected ones stay, and
 * protected variables that cannot fit fail loud with EnvBudgetError.
 */
import { describe, expect, it } from "vitest";
import { EnvBudgetError, InvalidEnvError } from "../../src/errors.js";
import { MAX_ARG_STRLEN, probeLimits } from "../../src/limits.js";
import { createRuntime } from "../../src/runtime.js";
import { errorText, sha256 } from "../helpers/steps.js";

const KIB = 1024;
const MIB = 1024 * KIB;
const SENTINEL = "SENTINEL-5e17";

describe("runtime.spawn", () => {
  const runtime = createRuntime();

  it("refuses an argv string over MAX_ARG_STRLEN, naming its index and size, never its text", () => {
    const prompt = `${SENTINEL}${"p".repeat(MAX_ARG_STRLEN)}`;
    let caught: unknown;
    try {
      runtime.spawn("cat", ["--", prompt]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidEnvError);
    const bytes = Buffer.byteLength(prompt) + 1;
    expect((caught as Error).message).toContain(`argv[2] (${bytes} bytes)`);
    expect(errorText(caught)).not.toContain(SENTINEL);
  });

  it("accepts an argv string of exactly MAX_ARG_STRLEN bytes (NUL included)", async () => {
    const arg = "a".repeat(MAX_ARG_STRLEN - 1);
    const result = await runtime.spawn("sh", ["-c", 'printf %s "$1" | wc -c', "sh", arg]);
    expect(String(result.stdout).trim()).toBe(String(arg.length));
  });

  it("passes a huge prompt through stdin (input)", async () => {
    const prompt = `${SENTINEL}\n${"é".repeat(3 * MIB)}\n`;
    const result = await runtime.spawn("sha256sum", [], { input: prompt });
    expect(String(result.stdout).slice(0, 64)).toBe(sha256(prompt));
  });

  it("trims inherited variables largest first to fit a huge parent environment, keeping protected ones", async () => {
    const parentEnv: Record<string, string> = {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      HOME: "/home/test",
      TASK_DESCRIPTION: `${SENTINEL}${"t".repeat(20 * KIB)}`,
      EXACTSPAWN_SESSION_STATE: `${SENTINEL}${"s".repeat(20 * KIB)}`,
    };
    for (let i = 0; i < 40; i++) {
      parentEnv[`BIG_${String(i).padStart(2, "0")}`] = "b".repeat(100 * KIB + i);
    }
    const trimmedRuntime = createRuntime({ inherit: "all", parentEnv });
    const trims: string[][] = [];
    // At most the real limit (the fallback project probes the 256 KiB floor).
    const limits = {
      execLimit: Math.min(MIB, probeLimits().execLimit),
      maxArgStrlen: MAX_ARG_STRLEN,
    };
    const result = await trimmedRuntime.spawn(
      "sh",
      ["-c", 'printf %s "$TASK_DESCRIPTION" | wc -c; env | cut -d= -f1 | sort'],
      { limits, onTrim: (dropped) => trims.push(dropped.map((d) => d.name)) },
    );
    const [taskBytes, ...names] = String(result.stdout).trimEnd().split("\n");
    expect(Number(taskBytes)).toBe(parentEnv["TASK_DESCRIPTION"]!.length);
    expect(names).toEqual(expect.arrayContaining(["PATH", "HOME", "EXACTSPAWN_SESSION_STATE"]));
    expect(trims).toHaveLength(1);
    const dropped = trims[0]!;
    const kept = names.filter((name) => name.startsWith("BIG_"));
    expect(dropped.length).toBeGreaterThan(0);
    expect(kept.length).toBeGreaterThan(0);
    expect(dropped.length + kept.length).toBe(40);
    // Largest first: every dropped variable is at least as large as every kept one.
    const smallestDropped = Math.min(...dropped.map((n) => parentEnv[n]!.length));
    const largestKept = Math.max(...kept.map((n) => parentEnv[n]!.length));
    expect(smallestDropped).toBeGreaterThan(largestKept);
  });

  it("rejects with EnvBudgetError when protected variables alone overflow, naming them and never their values", async () => {
    const size = Math.max(3 * MIB, probeLimits().execLimit + MIB);
    const overflowing = createRuntime({
      hostEnv: { EXACTSPAWN_STATE: `${SENTINEL}${"s".repeat(size)}` },
    });
    // What the run meets rejects (docs/spawn.md, "Errors"): nothing is thrown.
    const child = overflowing.spawn("true");
    const caught = await child.result.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(caught).toBeInstanceOf(EnvBudgetError);
    const budget = caught as EnvBudgetError;
    expect(budget.offenders[0]!.name).toBe("EXACTSPAWN_STATE");
    expect(budget.message).toContain("EXACTSPAWN_STATE");
    expect(errorText(caught)).not.toContain(SENTINEL);
  });
});
