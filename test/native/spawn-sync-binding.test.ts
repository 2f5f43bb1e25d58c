/**
 * The addon's spawnSync takes the deadline plan as plain numbers
 * (src/spawn/deadline-plan.ts, nativeDeadline) and refuses anything else
 * with a TypeError naming the field, before any child starts; it returns the
 * run's endings for TypeScript to name.
 */
import { describe, expect, it } from "vitest";
import {
  type NativeBinding,
  nativeBinding,
  nativeStatus,
  type RawDeadline,
} from "../../src/native.js";
import { deadlinePlan, nativeDeadline } from "../../src/spawn/deadline-plan.js";
import { zombieChildren } from "../fixtures/process-state.js";

const plan: RawDeadline = nativeDeadline(
  deadlinePlan({ timeout: 100, killSignal: 15, killGraceMs: 100, maxBuffer: 64, ownGroup: true }),
);

describe.runIf(nativeStatus().loaded)("the addon's spawnSync deadline", () => {
  const run = (deadline: unknown, extra: object = {}) =>
    (nativeBinding() as Required<NativeBinding>).spawnSync({
      file: "/bin/sleep",
      argv: ["sleep", "10"],
      envp: [],
      stdio: [-1, -1, -1],
      setpgroup: true,
      deadline: deadline as RawDeadline,
      ...extra,
    });

  it.each([
    ["no deadline", undefined, /deadline must be an object/],
    ["a timeout below -1", { ...plan, timeoutMs: -2 }, /deadline\.timeoutMs is out of range/],
    ["a fractional never", { ...plan, timeoutMs: -0.5 }, /deadline\.timeoutMs is out of range/],
    [
      "a timeout as a string",
      { ...plan, timeoutMs: "100" },
      /deadline\.timeoutMs must be a number/,
    ],
    ["no endSignal", { ...plan, endSignal: 0 }, /deadline\.endSignal must be a signal number/],
    ["signal 65", { ...plan, groupSignalAtExit: 65 }, /groupSignalAtExit must be a signal number/],
    ["a negative grace", { ...plan, graceMs: -1 }, /deadline\.graceMs is out of range/],
    ["toGroup as a number", { ...plan, toGroup: 1 }, /deadline\.toGroup must be a boolean/],
  ])("refuses %s", (_what, deadline, message) => {
    expect(() => run(deadline)).toThrow(TypeError);
    expect(() => run(deadline)).toThrow(message);
    expect(zombieChildren()).toEqual([]);
  });

  it("refuses toGroup for a child that leads no group", () => {
    expect(() => run(plan, { setpgroup: false })).toThrow(/toGroup needs setsid or setpgroup/);
  });

  it("executes the plan and reports its endings", () => {
    const result = run(plan);
    expect(result).toMatchObject({
      signal: "SIGTERM",
      endings: [{ cause: "timeout", leaderRunning: true }],
    });
  });
});
