/**
 * The sentinel test for bash steps and runtime.spawn: a marker in every value
 * (step values, context, inherited, overlay, host) and after runs with
 * warnings, drops, trims, spill-write failures, a NUL refusal, budget errors
 * and failing steps, the marker is in no log line (the runtime's logger and
 * the library logger, both at trace) and in no error: message, stack, own
 * properties, cause chain and util.inspect. The child never prints a value.
 */
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { MAX_ARG_STRLEN, PER_VALUE_ENV_CAP, probeLimits } from "../../src/limits.js";
import { setLogger } from "../../src/log.js";
import { createRuntime } from "../../src/runtime.js";
import { captureLog } from "../helpers/capture-log.js";
import { errorText, makeRootFactory, rejection } from "../helpers/steps.js";

const SENTINEL = "SENTINEL-5e17";
const KIB = 1024;
const MIB = 1024 * KIB;
const { root, removeRoots } = makeRootFactory();
afterAll(removeRoots);
afterEach(() => setLogger(undefined));

const marked = (bytes: number, fill = "v"): string =>
  `${SENTINEL}${fill.repeat(Math.max(0, bytes - SENTINEL.length))}`;

function setup() {
  const runtimeLog = captureLog();
  const libraryLog = captureLog();
  setLogger(libraryLog.logger);
  const parentEnv: Record<string, string> = {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: "/home/test",
    // Over MAX_ARG_STRLEN: dropped by the per-string filter, with a warning.
    HUGE_INHERITED: marked(MAX_ARG_STRLEN + 10),
  };
  // Trimmed under small limits, with a warning each.
  for (let i = 0; i < 12; i++) parentEnv[`INHERITED_${i}`] = marked(100 * KIB);
  const runtime = createRuntime({
    preset: "recipe-runner-compat",
    parentEnv,
    logger: runtimeLog.logger,
    overlay: { OVERLAY_NOTE: marked(64) },
  });
  const logs = () => [...runtimeLog.lines, ...libraryLog.lines].join("\n");
  return { runtime, logs, runtimeLog };
}

const stepValues = {
  report: marked(300 * KIB), // spilled under both names
  small: marked(100), // inline
  _: marked(PER_VALUE_ENV_CAP + 1), // "_" cannot be spilled (bash resets $_): dropped
  "odd-name": marked(200 * KIB), // not an identifier: skipped
  lineno: marked(10), // LINENO inline
};
const context = {
  task_description: marked(1000),
  "bad key": marked(10),
  ld_preload: marked(10),
  huge: marked(PER_VALUE_ENV_CAP + 5),
};

describe("no value in any log line or error", () => {
  it("after a run with warnings, drops, skips and trims", async () => {
    const { runtime, logs, runtimeLog } = setup();
    const result = await runtime.bash("echo ok", {
      values: stepValues,
      context,
      // At most the real limit (the fallback project probes the 256 KiB floor).
      limits: { execLimit: Math.min(MIB, probeLimits().execLimit), maxArgStrlen: MAX_ARG_STRLEN },
      tmpdir: root(),
      step: "warned",
      maxEnvValueBytes: 65_536,
    });
    expect(result.output).toBe("ok");
    expect(result.dropped.map((d) => d.name)).toEqual(expect.arrayContaining(["_"]));
    expect(result.dropped.some((d) => d.name.startsWith("INHERITED_"))).toBe(true);
    expect(result.skipped.map((s) => s.name)).toEqual(
      expect.arrayContaining(["RECIPE_VAR_odd-name", "LD_PRELOAD"]),
    );
    // The notices really were logged (to the runtime's logger), names only.
    const text = logs();
    expect(text).toContain('"event":"step.dropped"');
    expect(text).toContain('"event":"step.skipped"');
    expect(text).toContain("INHERITED_");
    expect(text).toContain("HUGE_INHERITED");
    expect(runtimeLog.lines.length).toBeGreaterThan(0);
    expect(text).not.toContain(SENTINEL);
    expect(JSON.stringify(result.dropped) + JSON.stringify(result.skipped)).not.toContain(SENTINEL);
    expect(JSON.stringify(result.spilled)).not.toContain(SENTINEL);
  });

  it("after a spill-write failure (missing and read-only tmpdir)", async () => {
    const { runtime, logs } = setup();
    const missing = join(root(), "missing");
    // The file kinds: a memfd (the addon) needs no TMPDIR and cannot fail this way.
    const fileKinds = { spillKinds: ["tmpfile", "unlinked"] } as const;
    const errors = [
      await rejection(runtime.bash("true", { values: stepValues, tmpdir: missing, ...fileKinds })),
    ];
    if (process.getuid?.() !== 0) {
      // root ignores directory permissions; the missing directory covers it there.
      const readOnly = join(root(), "read-only");
      mkdirSync(readOnly, { mode: 0o500 });
      chmodSync(readOnly, 0o500);
      errors.push(
        await rejection(
          runtime.bash("true", { values: stepValues, tmpdir: readOnly, ...fileKinds }),
        ),
      );
    }
    for (const error of errors) {
      expect(error).toMatchObject({ name: "SpillError", code: "ERR_EXACTSPAWN_SPILL_WRITE" });
      expect(errorText(error)).not.toContain(SENTINEL);
    }
    expect(logs()).not.toContain(SENTINEL);
  });

  it("after a value with NUL (refused before anything is written)", async () => {
    const { runtime, logs } = setup();
    // An InvalidEnvError is a TypeError: thrown at the call (docs/spawn.md, "Errors").
    const error = await rejection(
      Promise.resolve().then(() =>
        runtime.bash("true", {
          values: { nul: `${marked(200 * KIB)}\0${SENTINEL}` },
          tmpdir: root(),
        }),
      ),
    );
    // The layering refuses NUL in any step value, before the spill planner sees it.
    expect(error).toMatchObject({ name: "InvalidEnvError", variable: "RECIPE_VAR_nul" });
    expect(errorText(error)).not.toContain(SENTINEL);
    expect(logs()).not.toContain(SENTINEL);
  });

  it("after an EnvBudgetError from a protected variable (host and overlay)", async () => {
    const libraryLog = captureLog();
    setLogger(libraryLog.logger);
    for (const layer of ["hostEnv", "overlay"] as const) {
      const runtime = createRuntime({ [layer]: { EXACTSPAWN_STATE: marked(3 * MIB) } });
      const errors: unknown[] = [
        await rejection(runtime.bash("true", { values: stepValues, tmpdir: root() })),
        await rejection(Promise.resolve().then(() => runtime.planBash("true"))),
        await rejection(Promise.resolve().then(() => runtime.spawn("true"))),
      ];
      for (const error of errors) {
        expect(error).toMatchObject({ name: "EnvBudgetError" });
        expect((error as Error).message).toContain("EXACTSPAWN_STATE");
        expect(errorText(error)).not.toContain(SENTINEL);
      }
    }
    expect(libraryLog.lines.join("\n")).not.toContain(SENTINEL);
  });

  it("after failing steps that print no value (exit 3, timeout, file mode)", async () => {
    const { runtime, logs } = setup();
    const tmp = root();
    const options = { values: stepValues, context, tmpdir: tmp };
    const errors = [
      await rejection(runtime.bash("echo failing >&2; exit 3", options)),
      await rejection(runtime.bash("sleep 30", { ...options, timeout: 200 })),
      await rejection(runtime.bash(`: '${"c".repeat(70 * KIB)}'\nexit 4`, options)),
      await rejection(runtime.bash("exit 5", { ...options, values: { x: marked(50) } })),
    ];
    expect(errors.map((e) => (e as { reason?: string }).reason)).toEqual([
      "exit",
      "timeout",
      "exit",
      "exit",
    ]);
    for (const error of errors) expect(errorText(error)).not.toContain(SENTINEL);
    expect(logs()).not.toContain(SENTINEL);
  });
});
