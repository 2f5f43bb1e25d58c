/**
 * The Subprocess's end-of-run bookkeeping, driven with a fake engine (no
 * child). The engine executes the plan's signals (the native one on its
 * deadline keeper's thread); the Subprocess only learns what happened, names
 * the failure from it, reports when the child was killed, and ends a capture
 * a daemon holds after the grace. It never signals for an ending itself.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { EndingRecord } from "../../src/spawn/deadline-plan.js";
import type { Engine, EngineChild, EngineExit, EngineRequest } from "../../src/spawn/engine.js";
import { type RunPolicy, Subprocess } from "../../src/spawn/subprocess.js";

/** The leader the fake-engine tests start: sh in a group of its own, stdout piped. */
const SH_REQUEST: EngineRequest = {
  file: "/bin/sh",
  argv: ["sh"],
  entries: [],
  cwd: undefined,
  stdio: ["ignore", "pipe", "ignore"],
  setsid: false,
  setpgroup: true,
};

/** Their policy but for the timeout and the signal: a 5 ms grace after SIGTERM, output captured. */
const POLICY: Omit<RunPolicy, "timeout" | "signal"> = {
  encoding: "utf8",
  buffer: true,
  maxBuffer: 1024,
  killSignal: 15,
  killGraceMs: 5,
  reject: false,
  input: undefined,
  ownGroup: true,
  ref: true,
};

const KILLED_AT = 1_700_000_000_123.5;

/** `records`: what ending() answers, call after call (the last one repeats). */
function fakeRun(records: ReadonlyArray<EndingRecord | null>, options: { abortAt?: number } = {}) {
  const calls: string[] = [];
  let deliver!: (exit: EngineExit) => void;
  let asked = 0;
  const leaderRunning = records.at(-1)?.leaderRunning ?? true;
  const engine: Engine = {
    native: true,
    start(_request, onExit): EngineChild {
      deliver = onExit;
      return {
        pid: 4242,
        streams: [null, null, null],
        captured: [1],
        takeOver: () => null,
        kill: (sig) => calls.push(`kill ${sig}`) && 0,
        killGroup: (sig) => calls.push(`killGroup ${sig}`) && 0,
        endNow: () => {
          calls.push("endNow");
          return records.at(-1) ?? { byDeadline: false, leaderRunning: true, at: KILLED_AT };
        },
        ending: () => {
          const record = records[Math.min(asked++, records.length - 1)] ?? null;
          calls.push(record === null ? "ending: none yet" : "ending");
          return record;
        },
        endCaptureAtExit: () => {
          calls.push("endCaptureAtExit");
          // The engine delivers what it read once the leader is reaped.
          deliver({
            exitCode: leaderRunning ? null : 0,
            signal: leaderRunning ? "SIGTERM" : null,
            resourceUsage: null,
            output: [null, Buffer.from("partial")],
          });
        },
        ref: () => {},
        unref: () => {},
      };
    },
  };
  const controller = new AbortController();
  const run = new Subprocess(
    engine,
    { ...SH_REQUEST, capture: { slots: [1], maxBuffer: 1024 } },
    {
      ...POLICY,
      timeout: options.abortAt === undefined ? 5 : undefined,
      signal: options.abortAt === undefined ? undefined : controller.signal,
    },
  );
  if (options.abortAt !== undefined) setTimeout(() => controller.abort(), options.abortAt);
  return { run, calls };
}

describe("Subprocess ending bookkeeping", () => {
  it("a timeout the engine ended while the leader ran: a timeout, killed when the engine says, no signal from here", async () => {
    const { run, calls } = fakeRun([{ byDeadline: true, leaderRunning: true, at: KILLED_AT }]);
    const result = await run;
    expect(calls).toEqual(["ending", "endCaptureAtExit"]);
    expect(result).toMatchObject({
      failure: "timeout",
      signal: "SIGTERM",
      stdout: "partial",
      killedAt: KILLED_AT,
    });
  });

  it("a timeout that found the leader exited: its own exit, nobody killed, the capture ended after the grace", async () => {
    const { run, calls } = fakeRun([{ byDeadline: true, leaderRunning: false, at: null }]);
    const result = await run;
    expect(calls).toEqual(["ending", "endCaptureAtExit"]);
    expect(result).toMatchObject({ failure: null, exitCode: 0, stdout: "partial", killedAt: null });
  });

  it("this thread's timer a hair ahead of the engine's: it looks again and learns, without signalling", async () => {
    const { run, calls } = fakeRun([
      null,
      { byDeadline: true, leaderRunning: true, at: KILLED_AT },
    ]);
    const result = await run;
    expect(calls).toEqual(["ending: none yet", "ending", "endCaptureAtExit"]);
    expect(result).toMatchObject({ failure: "timeout", killedAt: KILLED_AT });
  });

  it("an abort asks the engine to end the run and reports its record", async () => {
    const { run, calls } = fakeRun([{ byDeadline: false, leaderRunning: true, at: KILLED_AT }], {
      abortAt: 1,
    });
    const result = await run;
    expect(calls).toEqual(["endNow", "endCaptureAtExit"]);
    expect(result).toMatchObject({ failure: "abort", killedAt: KILLED_AT });
  });

  it("an abort after the engine's deadline: the timeout came first and names the failure", async () => {
    const { run, calls } = fakeRun([{ byDeadline: true, leaderRunning: true, at: KILLED_AT }], {
      abortAt: 1,
    });
    const result = await run;
    expect(calls).toEqual(["endNow", "endCaptureAtExit"]);
    expect(result).toMatchObject({ failure: "timeout", killedAt: KILLED_AT });
  });
});

describe("an exit that arrives after the grace (the fallback: this thread reads the pipe)", () => {
  it("ends the output a daemon holds at that exit, with what was read", async () => {
    // The engine does not capture: the Subprocess reads a stream a daemon keeps
    // open. The grace passes with the leader still there (its exit is held
    // back until the grace timer has run: the order a busy loop may give the
    // fallback, whose SIGKILL and exit event race the grace timer), then the
    // leader exits. Without the capture's end being remembered at the grace,
    // the run would wait for the daemon's stream to end: here, never.
    const stdout = new PassThrough();
    let deliver!: (exit: EngineExit) => void;
    let graceOver!: () => void;
    const afterGrace = new Promise<void>((resolve) => {
      graceOver = resolve;
    });
    const engine: Engine = {
      native: false,
      start(_request, onExit): EngineChild {
        deliver = onExit;
        return {
          pid: 4242,
          streams: [null, stdout, null],
          captured: [],
          takeOver: () => null,
          kill: () => 0,
          killGroup: () => 0,
          endNow: () => ({ byDeadline: false, leaderRunning: true, at: KILLED_AT }),
          ending: () => ({ byDeadline: true, leaderRunning: true, at: KILLED_AT }),
          // Called by the grace timer: the exit is not known yet.
          endCaptureAtExit: () => graceOver(),
          ref: () => {},
          unref: () => {},
        };
      },
    };
    const run = new Subprocess(engine, SH_REQUEST, { ...POLICY, timeout: 5, signal: undefined });
    stdout.write("daemon pid\n");
    await afterGrace;
    deliver({ exitCode: null, signal: "SIGKILL", resourceUsage: null });
    const result = await run;
    expect(result).toMatchObject({
      failure: "timeout",
      signal: "SIGKILL",
      stdout: "daemon pid\n",
      killedAt: KILLED_AT,
    });
    expect(stdout.destroyed).toBe(true);
  });
});
