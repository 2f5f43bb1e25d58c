/**
 * Step identity (issue 20, items 2 and 5): every error of a runtime.bash or
 * runtime.spawn call carries `step` and `correlationId` and names the step
 * in its message; each call logs start and end at info (and a failure at
 * error) through the host's own pino logger, bound to `lib: "exactspawn"`,
 * with field names that never collide with pino's (`name`, `msg`, `pid`,
 * `time`, `level`, `hostname`).
 */
import { runInNewContext } from "node:vm";
import { afterAll, describe, expect, it } from "vitest";
import { isStepError, SubprocessError } from "../../src/index.js";
import { createRuntime } from "../../src/runtime.js";
import { captureLog } from "../helpers/capture-log.js";
import { makeRootFactory, rejection } from "../helpers/steps.js";

const { root, removeRoots } = makeRootFactory();
afterAll(removeRoots);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PINO_KEYS = ["name", "msg", "pid", "time", "level", "hostname"];

/** Each key of pino's own appears at most once in a raw JSON line. */
function collisions(line: string): string[] {
  return PINO_KEYS.filter((key) => line.split(`"${key}":`).length > 2);
}

describe("errors name their step", () => {
  it("a failing bash step: step and correlationId as fields, the step in the message", async () => {
    const runtime = createRuntime({ parentEnv: { PATH: process.env["PATH"] ?? "" } });
    const error = await rejection(
      runtime.bash("exit 3", { step: "failing-step", correlationId: "run-42", tmpdir: root() }),
    );
    expect(error).toMatchObject({
      name: "SubprocessError",
      exitCode: 3,
      step: "failing-step",
      correlationId: "run-42",
    });
    expect((error as Error).message).toMatch(
      /^step "failing-step": Command failed with exit code 3/,
    );
    expect((error as Error).stack).toContain('step "failing-step": Command failed');
    // The correlation id is a field, never message text (it may be an env value).
    expect((error as Error).message).not.toContain("run-42");
  });

  it("without a correlation id anywhere, one is generated per call and not exported", async () => {
    const runtime = createRuntime({ parentEnv: { PATH: process.env["PATH"] ?? "" } });
    const first = (await rejection(runtime.bash("env; exit 1", { tmpdir: root() }))) as {
      correlationId: string;
      message: string;
      stdout: string;
    };
    const second = (await rejection(runtime.bash("exit 1", { tmpdir: root() }))) as {
      correlationId: string;
    };
    expect(first.correlationId).toMatch(UUID);
    expect(second.correlationId).toMatch(UUID);
    expect(first.correlationId).not.toBe(second.correlationId);
    expect(first.message).toMatch(/^Command failed/);
    expect(first.stdout).not.toContain(first.correlationId);
  });

  it("the runtime's correlation id is the default", async () => {
    const runtime = createRuntime({
      parentEnv: { PATH: process.env["PATH"] ?? "" },
      correlationId: "run-7",
    });
    const error = await rejection(runtime.bash("exit 1", { step: "s", tmpdir: root() }));
    expect(error).toMatchObject({ step: "s", correlationId: "run-7" });
  });

  it("errors before the start carry it too (no bash, a bad option thrown at once)", async () => {
    const runtime = createRuntime({ parentEnv: { PATH: process.env["PATH"] ?? "" } });
    let bad: unknown;
    try {
      runtime.bash("true", { step: "typo", cwd: "" } as unknown as { step: string });
    } catch (error) {
      bad = error;
    }
    expect(bad).toBeInstanceOf(TypeError);
    expect(bad).toMatchObject({ step: "typo" });
    expect((bad as Error).message).toMatch(/^step "typo": bash: options.cwd/);
    const noBash = createRuntime({ parentEnv: {} });
    const missing = await rejection(noBash.bash("true", { step: "nb", tmpdir: root() }).result);
    expect(missing).toMatchObject({ code: "ENOENT", step: "nb" });
  });

  it("runtime.spawn: a thrown TypeError and a rejected run both carry it", async () => {
    const runtime = createRuntime({ parentEnv: { PATH: process.env["PATH"] ?? "" } });
    let thrown: unknown;
    try {
      runtime.spawn("true", [], { step: "agent", shell: true } as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect(thrown).toMatchObject({ step: "agent", correlationId: expect.stringMatching(UUID) });
    const failed = await rejection(
      runtime.spawn("sh", ["-c", "exit 4"], { step: "agent", correlationId: "c-1" }).result,
    );
    expect(failed).toMatchObject({
      name: "SubprocessError",
      exitCode: 4,
      step: "agent",
      correlationId: "c-1",
    });
    expect((failed as Error).message).toMatch(/^step "agent": Command failed with exit code 4/);
  });
});

describe("isStepError: a catch block's unknown narrowed to the step's error", () => {
  it("holds for every kind of step error, and narrows for the compiler", async () => {
    const runtime = createRuntime({ parentEnv: { PATH: process.env["PATH"] ?? "" } });
    const failed = await rejection(runtime.bash("exit 3", { step: "s", tmpdir: root() }));
    let thrown: unknown;
    try {
      runtime.bash("true", { step: "t", cwd: "" } as unknown as { step: string });
    } catch (error) {
      thrown = error;
    }
    const missing = await rejection(
      createRuntime({ parentEnv: {} }).bash("true", { step: "nb", tmpdir: root() }).result,
    );
    for (const error of [failed, thrown, missing]) {
      expect(isStepError(error)).toBe(true);
      if (!isStepError(error)) continue;
      // Typed reads: no cast (this file is type-checked by `npm run typecheck`).
      const step: string | undefined = error.step;
      const correlationId: string = error.correlationId;
      expect(step).toMatch(/^(s|t|nb)$/);
      expect(correlationId).toMatch(UUID);
    }
    expect(SubprocessError.is(failed) && isStepError(failed) && failed.exitCode).toBe(3);
    // The brand is not enumerable: a logger serialising the error does not print it.
    expect(Object.keys(failed as object)).not.toContain(Symbol.for("exactspawn.StepError"));
    expect(JSON.stringify(failed)).not.toContain("StepError");
  });

  it("is false for anything a step did not throw; true across realms (a brand, not instanceof)", () => {
    for (const value of [
      new Error("x"),
      Object.assign(new Error("x"), { step: "s", correlationId: "c" }),
      new SubprocessError({
        reason: "exit",
        argv: ["x"],
        envNames: [],
        exitCode: 1,
        signal: null,
        stdout: null,
        stderr: null,
        durationMs: 0,
        resourceUsage: null,
      }),
      null,
      undefined,
      "step",
      { step: "s" },
    ]) {
      expect(isStepError(value)).toBe(false);
    }
    const foreign = runInNewContext(
      'const e = new Error("x"); Object.defineProperty(e, Symbol.for("exactspawn.StepError"), { value: true }); e',
    ) as unknown;
    expect(foreign instanceof Error).toBe(false);
    expect(isStepError(foreign)).toBe(true);
  });

  it("reads the brand as an own property: a polluted prototype or a derived object is not a step error", async () => {
    const runtime = createRuntime({ parentEnv: { PATH: process.env["PATH"] ?? "" } });
    const failed = await rejection(runtime.bash("exit 3", { step: "s", tmpdir: root() }));
    // An object made from a real one inherits its brands, and is neither.
    const derived = Object.create(failed as object) as unknown;
    expect(isStepError(derived)).toBe(false);
    expect(SubprocessError.is(derived)).toBe(false);
    const prototype = Object.prototype as unknown as Record<symbol, unknown>;
    const brands = [Symbol.for("exactspawn.StepError"), ...Object.getOwnPropertySymbols(failed)];
    try {
      for (const brand of brands) prototype[brand] = true;
      expect(isStepError({})).toBe(false);
      expect(isStepError(new Error("x"))).toBe(false);
      expect(SubprocessError.is({})).toBe(false);
      expect(SubprocessError.is(new Error("x"))).toBe(false);
    } finally {
      for (const brand of brands) delete prototype[brand];
    }
    expect(isStepError(failed) && SubprocessError.is(failed)).toBe(true);
  });
});

describe("log events", () => {
  it("start and end at info, a failure at error, through the host's logger", async () => {
    const capture = captureLog();
    const runtime = createRuntime({
      parentEnv: { PATH: process.env["PATH"] ?? "" },
      logger: capture.logger,
    });
    const ok = await runtime.bash("echo hi", {
      step: "one",
      correlationId: "c-one",
      values: { big: "v".repeat(200 * 1024) },
      tmpdir: root(),
    });
    await rejection(
      runtime.bash("exit 5", { step: "two", correlationId: "c-two", tmpdir: root() }),
    );
    const child = runtime.spawn("sh", ["-c", "exit 0"], { step: "three" });
    await child;
    const events = capture
      .events()
      .filter((e) => typeof e["event"] === "string" && e["event"] !== "step.spilled");
    const brief = events.map((e) => [e["level"], e["event"], e["step"]]);
    expect(brief).toEqual([
      [30, "step.start", "one"],
      [30, "step.end", "one"],
      [30, "step.start", "two"],
      [30, "step.end", "two"],
      [50, "step.failed", "two"],
      [30, "step.start", "three"],
      [30, "step.end", "three"],
    ]);
    for (const event of events) expect(event["lib"]).toBe("exactspawn");
    const [start, end] = events as [Record<string, unknown>, Record<string, unknown>];
    expect(start).toMatchObject({
      correlationId: "c-one",
      childPid: ok.pid,
      kind: "bash",
      spilled: 1,
    });
    expect(end).toMatchObject({ childPid: ok.pid, exitCode: 0, signal: null, ok: true });
    expect(typeof end["durationMs"]).toBe("number");
    expect(events[4]).toMatchObject({ exitCode: 5, failure: "exit", correlationId: "c-two" });
    expect(events[5]!["childPid"]).toBe(child.pid);
    // The spill event of step one (one per step, names and sizes) is bound to the step as well.
    expect(capture.events().find((e) => e["event"] === "step.spilled")).toMatchObject({
      step: "one",
      correlationId: "c-one",
      count: 1,
      names: ["RECIPE_VAR_big"],
    });
    for (const line of capture.lines) expect(collisions(line)).toEqual([]);
    for (const event of capture.events()) expect(event).not.toHaveProperty("name");
  });

  it("twenty steps at debug: a start and an end for each, a failure for each failing one", async () => {
    const capture = captureLog();
    const runtime = createRuntime({
      parentEnv: { PATH: process.env["PATH"] ?? "" },
      logger: capture.logger,
    });
    const dir = root();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        runtime.bash(`exit $(( ${i} % 4 == 0 ))`, { step: `s${i}`, tmpdir: dir }).catch(() => {}),
      ),
    );
    const count = (event: string) => capture.events().filter((e) => e["event"] === event).length;
    expect([count("step.start"), count("step.end"), count("step.failed")]).toEqual([20, 20, 5]);
  });
});
