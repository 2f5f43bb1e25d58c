/**
 * A timeout bounds the result even when a process the child left behind
 * keeps its output open, and a leader that exited cleanly before the timeout
 * is reported as such (issue 11, bug 5). Before the fix the first run
 * settled only when the daemonised grandchild exited (6 s) and the second was
 * rejected as a "timeout" although its leader exited 0 at once.
 * No timing assertions: the proof that the result did not wait is that the
 * grandchild is still alive when it settles. Where the scenario needs one
 * event before a time (the leader's exit before its timeout, the settle
 * before the grandchild's sleep ends), the margin is seconds, stated here, not
 * the tenths a loaded 2-core machine may not give (issue 39, item 2): a
 * leader of one fork and an echo has 3 s, a grandchild outlives the settle
 * by 25 s; the abort after the leader's exit waits for that exit. Where the
 * host then kills the leader's group, the leader first waits until the
 * daemon leads its own session (field 6 of /proc/PID/stat): `setsid` runs in
 * the background child only after the leader may have exited or been
 * signalled, and a group kill before it takes the daemon along (CI, loaded).
 */
import { afterEach, describe, expect, it } from "vitest";
import { spawn } from "../../src/index.js";
import { eventually, isRunning, LeftBehind } from "../fixtures/process-state.js";

const leftBehind = new LeftBehind();
/** A `setsid sleep 30` that leads its own session before its pid is printed. */
const DETACHED =
  "setsid sleep 30 & e=$!; " +
  'until [ "$(cut -d\' \' -f6 /proc/$e/stat)" = "$e" ]; do sleep 0.01; done; echo $e';
afterEach(() => leftBehind.killAll());

describe("a timeout with output held open by a grandchild", () => {
  it.each([
    ["a daemonised (setsid) grandchild", "setsid sleep 30 & echo $!"],
    ["a background grandchild in the same group", "sleep 30 & echo $!"],
  ])("%s: settles with the leader's exit 0 and what was read", async (_what, script) => {
    const result = await spawn("/bin/sh", ["-c", script], {
      timeout: 3000,
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
    const result = await spawn("/bin/sh", ["-c", `${DETACHED}; exec sleep 30`], {
      timeout: 3000,
      killGraceMs: 200,
      reject: false,
    });
    expect(result.stdout).toMatch(/^\d+\n$/);
    const grandchild = Number(String(result.stdout).trim());
    leftBehind.add(grandchild);
    expect(isRunning(grandchild)).toBe(true);
    expect(result).toMatchObject({ exitCode: null, signal: "SIGTERM", failure: "timeout" });
  });

  it("an abort after the leader exited cuts the output after the grace and keeps the leader's exit", async () => {
    const controller = new AbortController();
    const run = spawn("/bin/sh", ["-c", DETACHED], {
      signal: controller.signal,
      killGraceMs: 200,
      reject: false,
    });
    // After the leader's exit (an event), not after a time it might not have had.
    expect(await eventually(() => !isRunning(run.pid!))).toBe(true);
    controller.abort();
    const result = await run;
    expect(result.stdout).toMatch(/^\d+\n$/);
    const grandchild = Number(String(result.stdout).trim());
    leftBehind.add(grandchild);
    expect(isRunning(grandchild)).toBe(true);
    expect(result).toMatchObject({ exitCode: 0, signal: null, failure: null });
  });
});
