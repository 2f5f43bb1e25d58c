/**
 * The deadline plan run with JavaScript timers (src/spawn/js-ending.ts: the
 * fallback engine, and an addon built before the deadline keeper), driven
 * with a fake target: what an ending sends depending on whether the leader
 * is still there. A leader that exited before the signal (a zombie not yet
 * reaped: its signal succeeds) did not end by it: red with that check
 * dropped (row js-ending-exited-before).
 */
import { spawn as spawnChild } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { deadlinePlan } from "../../src/spawn/deadline-plan.js";
import { JsEnding } from "../../src/spawn/js-ending.js";

const ESRCH = -3;
const SIGKILL = 9;

function target(leaderGone: boolean) {
  const calls: string[] = [];
  const record = (call: string): number => {
    calls.push(call);
    return leaderGone ? ESRCH : 0;
  };
  return {
    calls,
    kill: (sig: number) => record(`kill ${sig}`),
    killGroup: (sig: number) => record(`killGroup ${sig}`),
    killGroupAtExit: (sig: number) => record(`killGroupAtExit ${sig}`),
  };
}

const plan = deadlinePlan({
  timeout: 5,
  killSignal: 15,
  killGraceMs: 5,
  maxBuffer: 1024,
  ownGroup: true,
});

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("JsEnding", () => {
  it("at the timeout, a leader still there: group SIGTERM, SIGKILL for the rest at its exit, SIGKILL after the grace", () => {
    const fake = target(false);
    const ending = new JsEnding(plan, fake);
    expect(ending.ending()).toBeNull();
    vi.advanceTimersByTime(5);
    expect(fake.calls).toEqual(["killGroup 15", `killGroupAtExit ${SIGKILL}`]);
    vi.advanceTimersByTime(5);
    expect(fake.calls).toEqual([
      "killGroup 15",
      `killGroupAtExit ${SIGKILL}`,
      `killGroup ${SIGKILL}`,
    ]);
    expect(ending.ending()).toMatchObject({ byDeadline: true, leaderRunning: true });
    expect(ending.ending()?.at).toEqual(expect.any(Number));
  });

  it("a leader already reaped: the refused signal is the only one, and the ending does not count", () => {
    const fake = target(true);
    const ending = new JsEnding({ ...plan, timeoutMs: undefined }, fake);
    expect(ending.endNow()).toEqual({ byDeadline: false, leaderRunning: false, at: null });
    expect(ending.endNow()).toEqual({ byDeadline: false, leaderRunning: false, at: null });
    expect(fake.calls).toEqual(["killGroup 15"]);
  });

  it("stop() at the exit: nothing more is sent", () => {
    const fake = target(false);
    const ending = new JsEnding({ ...plan, timeoutMs: undefined }, fake);
    ending.endNow();
    ending.stop();
    vi.advanceTimersByTime(1000);
    expect(fake.calls).toEqual(["killGroup 15", `killGroupAtExit ${SIGKILL}`]);
  });
});

describe("JsEnding with a leader that has exited but is not reaped", () => {
  it("the signal it sends succeeds (a zombie), yet the ending does not count", async () => {
    vi.useRealTimers();
    // A holder whose child exits once told to, after the holder became a sleep that never reaps.
    const holder = spawnChild(
      "/bin/sh",
      ["-c", 'exec 3<&0; sh -c "read _ <&3" & echo $!; exec sleep 1000 3<&-'],
      { stdio: ["pipe", "pipe", "ignore"] },
    );
    try {
      const pid = Number(
        await new Promise<string>((resolve) =>
          holder.stdout!.once("data", (chunk: Buffer) => resolve(String(chunk))),
        ),
      );
      holder.stdin!.end("go\n");
      const state = () => {
        const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
        return stat[stat.lastIndexOf(")") + 2];
      };
      while (state() !== "Z") await new Promise((resolve) => setImmediate(resolve));
      const fake = { ...target(false), pid };
      const ending = new JsEnding(plan, fake);
      expect(ending.endNow()).toMatchObject({ leaderRunning: false, at: null });
      expect(fake.calls).toEqual(["killGroup 15"]);
      ending.stop();
    } finally {
      holder.kill("SIGKILL");
    }
  });
});
