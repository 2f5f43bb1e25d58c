/**
 * The Subprocess's end-of-run policy, driven with a fake engine (no child):
 * what a timeout asks of the engine depending on whether the leader is
 * still unreaped, and that the kill grace ends a capture a daemon holds.
 */
import { describe, expect, it } from "vitest";
import type { Engine, EngineChild, EngineExit } from "../../src/spawn/engine.js";
import { Subprocess } from "../../src/spawn/subprocess.js";

const ESRCH = -3;
const SIGKILL = 9;

function fakeRun(leaderReaped: boolean) {
  const calls: string[] = [];
  let deliver!: (exit: EngineExit) => void;
  const record = (call: string): number => {
    calls.push(call);
    return leaderReaped ? ESRCH : 0;
  };
  const engine: Engine = {
    native: true,
    start(_request, onExit): EngineChild {
      deliver = onExit;
      return {
        pid: 4242,
        streams: [null, null, null],
        captured: [1],
        takeOver: () => null,
        kill: (sig) => record(`kill ${sig}`),
        killGroup: (sig) => record(`killGroup ${sig}`),
        killGroupAtExit: (sig) => record(`killGroupAtExit ${sig}`),
        endCaptureAtExit: () => {
          calls.push("endCaptureAtExit");
          // The engine delivers what it read once the leader is reaped.
          deliver({
            exitCode: leaderReaped ? 0 : null,
            signal: leaderReaped ? null : "SIGTERM",
            resourceUsage: null,
            output: [null, Buffer.from("partial")],
          });
        },
        ref: () => {},
        unref: () => {},
      };
    },
  };
  const run = new Subprocess(
    engine,
    {
      file: "/bin/sh",
      argv: ["sh"],
      entries: [],
      cwd: undefined,
      stdio: ["ignore", "pipe", "ignore"],
      setsid: false,
      setpgroup: true,
      capture: { slots: [1], maxBuffer: 1024 },
    },
    {
      encoding: "utf8",
      buffer: true,
      maxBuffer: 1024,
      timeout: 5,
      killSignal: 15,
      killGraceMs: 5,
      signal: undefined,
      reject: false,
      input: undefined,
      ownGroup: true,
      ref: true,
    },
  );
  return { run, calls };
}

describe("Subprocess timeout policy", () => {
  it("a leader still unreaped: group SIGTERM, SIGKILL for the rest at its exit, then SIGKILL and the capture ended", async () => {
    const { run, calls } = fakeRun(false);
    const result = await run;
    expect(calls).toEqual([
      "killGroup 15",
      `killGroupAtExit ${SIGKILL}`,
      `killGroup ${SIGKILL}`,
      "endCaptureAtExit",
    ]);
    expect(result).toMatchObject({ failure: "timeout", signal: "SIGTERM", stdout: "partial" });
  });

  it("a leader already reaped: no group signal by number, the capture ended after the grace, its own exit reported", async () => {
    const { run, calls } = fakeRun(true);
    const result = await run;
    // The refused group signal is the only one attempted; nothing asks for more after it.
    expect(calls).toEqual(["killGroup 15", "endCaptureAtExit"]);
    expect(result).toMatchObject({ failure: null, exitCode: 0, signal: null, stdout: "partial" });
  });
});
