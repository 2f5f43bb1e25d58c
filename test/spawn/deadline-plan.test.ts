/**
 * The deadline plan (src/spawn/deadline-plan.ts) as a pure function: what
 * spawn's timers and spawnSync's native loop are both given. The behaviour
 * against real children is the shared table (timeout-policy.table.ts).
 * runFailure names an OOM kill "oom" though the kernel's SIGKILL ended it
 * (red with the oom test after the signal's: row oom-before-signal); the
 * plan keeps the kill grace (red with graceMs 0: row kill-grace-plan).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  deadlinePlan,
  type Ending,
  endingFailure,
  nativeDeadline,
  runFailure,
} from "../../src/spawn/deadline-plan.js";

const base = { timeout: 1000, killSignal: 15, killGraceMs: 500, maxBuffer: 64, ownGroup: true };

describe("deadlinePlan", () => {
  it("a timeout of 0 or none means no timeout", () => {
    expect(deadlinePlan({ ...base, timeout: 0 }).timeoutMs).toBeUndefined();
    expect(deadlinePlan({ ...base, timeout: undefined }).timeoutMs).toBeUndefined();
    expect(nativeDeadline(deadlinePlan({ ...base, timeout: 0 })).timeoutMs).toBe(-1);
  });

  it("signals the group, and its rest at the leader's exit, only when the child leads one", () => {
    expect(deadlinePlan(base)).toMatchObject({ toGroup: true, groupSignalAtLeaderExit: 9 });
    expect(deadlinePlan({ ...base, ownGroup: false })).toMatchObject({
      toGroup: false,
      groupSignalAtLeaderExit: 0,
    });
  });

  it("the native form never brings a deadline forward", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.001, max: 1e7, noNaN: true }),
        fc.double({ min: 0, max: 1e7, noNaN: true }),
        (timeout, grace) => {
          const raw = nativeDeadline(deadlinePlan({ ...base, timeout, killGraceMs: grace }));
          expect(raw.timeoutMs).toBeGreaterThanOrEqual(timeout);
          expect(raw.graceMs).toBeGreaterThanOrEqual(grace);
          expect(Number.isInteger(raw.timeoutMs) && Number.isInteger(raw.graceMs)).toBe(true);
        },
      ),
    );
  });
});

describe("endingFailure", () => {
  const ending = (cause: Ending["cause"], leaderRunning: boolean): Ending => ({
    cause,
    leaderRunning,
  });

  it.each([
    [[], null],
    [[ending("timeout", true)], "timeout"],
    [[ending("timeout", false)], null],
    [[ending("abort", false)], null],
    [[ending("maxBuffer", false)], "maxBuffer"],
    [[ending("timeout", false), ending("maxBuffer", false)], "maxBuffer"],
    [[ending("timeout", true), ending("maxBuffer", false)], "timeout"],
    [[ending("maxBuffer", true), ending("timeout", false)], "maxBuffer"],
  ] as const)("%j → %s", (endings, failure) => {
    expect(endingFailure(endings)).toBe(failure);
  });
});

describe("runFailure", () => {
  /** A cgroup's counts with `oomKill` OOM kills (memory.events oom_kill). */
  const killed = (oomKill: number) => ({
    limitEvents: {
      pidsMax: null,
      memoryMax: null,
      oom: oomKill,
      oomKill,
      cpuThrottledMicros: null,
      cpuThrottledPeriods: null,
    },
  });
  it('an OOM kill is "oom", though the kernel\'s SIGKILL ended the leader', () => {
    expect(runFailure([], { exitCode: null, signal: "SIGKILL", ...killed(1) })).toBe("oom");
    expect(runFailure([], { exitCode: 137, signal: null, ...killed(1) })).toBe("oom");
    expect(runFailure([], { exitCode: null, signal: "SIGKILL" })).toBe("signal");
    expect(runFailure([], { exitCode: 3, signal: null, ...killed(0) })).toBe("exit");
    expect(runFailure([], { exitCode: 0, signal: null })).toBeNull();
  });

  it("an ending that counts comes before the OOM killer", () => {
    const timeout: Ending = { cause: "timeout", leaderRunning: true };
    expect(runFailure([timeout], { exitCode: null, signal: "SIGKILL", ...killed(1) })).toBe(
      "timeout",
    );
  });
});

describe("the kill grace", () => {
  it("is the killGraceMs asked for, in both forms", () => {
    const plan = deadlinePlan({ ...base, killGraceMs: 2500 });
    expect(plan.graceMs).toBe(2500);
    expect(nativeDeadline(plan).graceMs).toBe(2500);
  });
});
