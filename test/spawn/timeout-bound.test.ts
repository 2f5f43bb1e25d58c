/**
 * A timeout bounds the result even when a process the child left behind
 * keeps its output open, and a leader that exited cleanly before the timeout
 * is reported as such (issue 11, bug 5). Before the fix the first run
 * settled only when the daemonised grandchild exited (6 s) and the second was
 * rejected as a "timeout" although its leader exited 0 at once.
 * No timing assertions: the proof that the result did not wait is that the
 * grandchild is still alive when it settles.
 */
import { afterEach, describe, expect, it } from "vitest";
import { spawn } from "../../src/index.js";
import { isRunning, LeftBehind } from "../fixtures/process-state.js";

const leftBehind = new LeftBehind();
afterEach(() => leftBehind.killAll());

describe("a timeout with output held open by a grandchild", () => {
  it.each([
    ["a daemonised (setsid) grandchild", "setsid sleep 6 & echo $!"],
    ["a background grandchild in the same group", "sleep 6 & echo $!"],
  ])("%s: settles with the leader's exit 0 and what was read", async (_what, script) => {
    const result = await spawn("/bin/sh", ["-c", script], {
      timeout: 1000,
      killGraceMs: 200,
      reject: false,
    });
    const grandchild = Number(String(result.stdout).trim());
    leftBehind.add(grandchild);
    const aliveAtSettle = isRunning(grandchild);
    expect({ ...result, durationMs: 0, resourceUsage: null, native: false, pid: 0 }).toEqual({
      pid: 0,
      exitCode: 0,
      signal: null,
      stdout: `${grandchild}\n`,
      stderr: "",
      durationMs: 0,
      resourceUsage: null,
      native: false,
      contained: null,
      failure: null,
      killedAt: null,
    });
    expect(aliveAtSettle).toBe(true);
  });

  it("a leader that outlives its timeout is killed and reported as timed out, without waiting for the daemon", async () => {
    const result = await spawn("/bin/sh", ["-c", "setsid sleep 6 & echo $!; exec sleep 10"], {
      timeout: 500,
      killGraceMs: 200,
      reject: false,
    });
    const grandchild = Number(String(result.stdout).trim());
    leftBehind.add(grandchild);
    expect(isRunning(grandchild)).toBe(true);
    expect(result).toMatchObject({ exitCode: null, signal: "SIGTERM", failure: "timeout" });
  });

  it("an abort after the leader exited cuts the output after the grace and keeps the leader's exit", async () => {
    const controller = new AbortController();
    const run = spawn("/bin/sh", ["-c", "setsid sleep 6 & echo $!"], {
      signal: controller.signal,
      killGraceMs: 200,
      reject: false,
    });
    setTimeout(() => controller.abort(), 300);
    const result = await run;
    const grandchild = Number(String(result.stdout).trim());
    leftBehind.add(grandchild);
    expect(isRunning(grandchild)).toBe(true);
    expect(result).toMatchObject({ exitCode: 0, signal: null, failure: null });
  });
});
