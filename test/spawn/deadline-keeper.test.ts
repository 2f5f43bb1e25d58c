/**
 * The addon's deadline keeper through its binding (native/deadline_args.cc,
 * native/core/deadline_keeper.h): the plan is type-checked field by field
 * (TypeError naming the field, never a coercion), a run that ends before its
 * deadline leaves nothing scheduled, and endNow()/ending() report the one
 * ending that happened.
 *
 * A run whose ending began and whose leader then exited inside the grace
 * leaves its SIGKILL unscheduled (red with the cancel leaving it: row
 * deadline-cancel-final). A timeout never begins before it is due: the
 * keeper rounds its due time up to the next whole millisecond; rounded down
 * (row deadline-never-early) it began up to 1 ms early, which 40 runs show
 * (killedAt before spawn's call + timeout). The order of two clock readings,
 * not a duration: load only makes the ending later.
 */
import { readFileSync } from "node:fs";
import { constants } from "node:os";
import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { spawn } from "../../src/index.js";
import {
  nativeBinding,
  type RawChildExit,
  type RawDeadline,
  type RawSpawnOptions,
} from "../../src/native.js";
import { rawSpawnOptions } from "../fixtures/raw-spawn.js";

const binding = nativeBinding();
const keeperBuilt = binding?.debugCounters?.().deadlinesPending !== undefined;

const PLAN: RawDeadline = {
  timeoutMs: -1,
  endSignal: constants.signals.SIGTERM,
  toGroup: false,
  graceMs: 5000,
  finalSignal: constants.signals.SIGKILL,
  groupSignalAtExit: 0,
  captureLimit: 1024,
};

function pending(): number {
  return binding!.debugCounters!().deadlinesPending!;
}

function spawnRaw(options: Partial<RawSpawnOptions>) {
  let exited!: (exit: RawChildExit | Error) => void;
  const exit = new Promise<RawChildExit | Error>((resolve) => {
    exited = resolve;
  });
  const handle = binding!.spawn!(
    rawSpawnOptions({ ...options, onExit: (e: unknown) => exited(e as RawChildExit) }),
  );
  return { handle, exit };
}

describe.runIf(keeperBuilt)("the deadline keeper's binding", () => {
  it.each([
    ["a deadline that is no object", "soon", "spawn: deadline must be an object"],
    ["a string timeoutMs", { ...PLAN, timeoutMs: "300" }, "deadline.timeoutMs must be a number"],
    [
      "a negative timeoutMs other than -1",
      { ...PLAN, timeoutMs: -5 },
      "deadline.timeoutMs is out of range",
    ],
    ["endSignal 0", { ...PLAN, endSignal: 0 }, "deadline.endSignal must be a signal number"],
    [
      "a fractional finalSignal",
      { ...PLAN, finalSignal: 9.5 },
      "deadline.finalSignal must be a signal number",
    ],
    ["a numeric toGroup", { ...PLAN, toGroup: 1 }, "deadline.toGroup must be a boolean"],
    [
      "toGroup without a group",
      { ...PLAN, toGroup: true },
      "deadline.toGroup needs setsid or setpgroup",
    ],
  ])("throws TypeError naming the field for %s", (_what, deadline, message) => {
    expect(() => binding!.spawn!(rawSpawnOptions({ deadline }))).toThrow(
      expect.objectContaining({ name: "TypeError", message: expect.stringContaining(message) }),
    );
  });

  it("runs that end long before their deadline leave nothing scheduled", async () => {
    const before = pending();
    const runs = Array.from({ length: 20 }, () =>
      spawn("/bin/true", [], { timeout: 3_600_000, killGraceMs: 3_600_000 }),
    );
    expect(pending()).toBe(before + 20);
    await Promise.all(runs);
    expect(pending()).toBe(before);
  });

  it("one keeper thread for the process, whatever the number of runs with a deadline", async () => {
    const threads = () =>
      Number(/Threads:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1]);
    await spawn("/bin/true", [], { timeout: 60_000 }); // the keeper runs from here on
    const before = threads();
    const runs = Array.from({ length: 50 }, () =>
      spawn("/bin/sleep", ["0.2"], { timeout: 60_000 }),
    );
    const during = threads();
    await Promise.all(runs);
    expect(during).toBe(before);
  });

  it("endNow() begins the one ending and ending() reports it; a later endNow() changes nothing", async () => {
    const { handle, exit } = spawnRaw({
      file: "/bin/sleep",
      argv: ["sleep", "30"],
      deadline: PLAN,
    });
    expect(handle.ending!()).toBeNull();
    const first = handle.endNow!();
    expect(first).toEqual({ byDeadline: false, leaderRunning: true, at: expect.any(Number) });
    expect(handle.endNow!()).toEqual(first);
    expect(handle.ending!()).toEqual(first);
    expect(await exit).toMatchObject({ signal: "SIGTERM" });
    expect(handle.ending!()).toEqual(first);
  });

  it("without a deadline plan there is no ending to begin", async () => {
    const { handle, exit } = spawnRaw({});
    expect(handle.endNow!()).toBeNull();
    expect(handle.ending!()).toBeNull();
    await exit;
  });

  it("an ending whose leader exits inside the grace leaves no SIGKILL scheduled", async () => {
    const before = pending();
    const runs = Array.from({ length: 10 }, () => {
      const abort = new AbortController();
      const run = spawn("/bin/sleep", ["1000"], {
        signal: abort.signal,
        killGraceMs: 3_600_000,
        reject: false,
      });
      abort.abort(); // SIGTERM ends sleep at once; its SIGKILL was due in an hour
      return run;
    });
    const results = await Promise.all(runs);
    expect(results.map((r) => r.signal)).toEqual(Array(10).fill("SIGTERM"));
    expect(pending()).toBe(before);
  });

  it("a timeout never begins before it is due (killedAt >= the spawn call + timeout)", async () => {
    const early: number[] = [];
    for (let i = 0; i < 40; i++) {
      const timeout = 3 + (i % 5);
      const calledAt = performance.timeOrigin + performance.now();
      const result = await spawn("/bin/sleep", ["1000"], { timeout, reject: false });
      expect(result.failure).toBe("timeout");
      const margin = result.killedAt! - (calledAt + timeout);
      if (margin < 0) early.push(margin);
    }
    expect(early).toEqual([]);
  });
});
