/**
 * Containment on the new spawn design: the deadline keeper (a thread of its
 * own) kills a contained step's whole cgroup at the escalation, so a tree
 * that outlives its grace dies on time while the host's event loop is busy
 * (TreeTarget, native/core/kill_target.h); and a child that execs the exec
 * helper (a uid change) has entered its cgroup before that exec
 * (native/core/child_path.cc).
 */
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { afterEach, describe, expect, it } from "vitest";
import { cgroupSupport, nativeStatus, spawn } from "../../src/index.js";
import { LeftBehind, type SeenProcess, seen, stillRunning } from "../fixtures/process-state.js";

const support = cgroupSupport();
const canContain = nativeStatus().loaded && support.available && process.getuid?.() === 0;
const left = new LeftBehind();
afterEach(() => left.killAll());
const env = { PATH: process.env["PATH"] ?? "/usr/bin:/bin" };

/** Blocks this thread for `ms` without an event loop turn; returns when it ended (epoch ms). */
function blockHost(ms: number): number {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  return performance.timeOrigin + performance.now();
}

describe.runIf(canContain)("contain with the deadline keeper and the exec helper", () => {
  it("the keeper kills the whole tree at the escalation while the host is busy", async () => {
    // The leader ignores SIGTERM; the escaper leads a session of its own, so
    // only the cgroup reaches it. The host blocks across the timeout and the
    // grace: without the keeper's cgroup kill the escaper would live on until
    // the loop reaps the leader.
    const script =
      "trap '' TERM; setsid sh -c 'echo $$; exec sleep 1000' & while :; do sleep 0.05; done";
    const run = spawn("/bin/bash", ["-c", script], {
      env,
      contain: true,
      timeout: 1500,
      killGraceMs: 200,
      reject: false,
      stdio: ["ignore", "pipe", "ignore"],
    });
    let escaper: SeenProcess | undefined;
    for await (const line of run.lines()) {
      escaper = seen(Number(line));
      left.add(Number(line));
      break;
    }
    expect(escaper).toBeDefined();
    const blockStarted = performance.timeOrigin + performance.now();
    const blockEnded = blockHost(6000);
    const runningAfterBlock = stillRunning(escaper);
    const result = await run;
    // The ending began and escalated inside the block (an order of events).
    expect(result.killedAt).toBeGreaterThan(blockStarted);
    expect(result.killedAt! + 200).toBeLessThan(blockEnded);
    expect(runningAfterBlock).toBe(false);
    expect(result).toMatchObject({ failure: "timeout", signal: "SIGKILL" });
  });

  it("a uid child (through the exec helper) starts inside its step's cgroup", async () => {
    const run = await spawn("/bin/cat", ["/proc/self/cgroup"], {
      env,
      uid: 65534,
      gid: 65534,
      contain: true,
    });
    // The cgroup v2 line ("0::PATH"; a hybrid host lists the v1 hierarchies too).
    const v2 = (text: string) => /^0::(.*)$/m.exec(text)?.[1];
    expect(v2(run.stdout)).not.toBe(v2(readFileSync("/proc/self/cgroup", "utf8")));
    expect(v2(run.stdout)).toMatch(new RegExp(`/exactspawn-${process.pid}-[0-9a-f]{16}/s\\d+$`));
    expect(run.contained).toMatchObject({ mechanism: "cgroup" });
  });
});
