/**
 * A process group is signalled by number only while its leader is unreaped:
 * until the reap the leader (a zombie at worst) pins the group id; after it
 * the number may belong to anyone (issue 11, bug 3). Before the fix a
 * timeout that fired after the leader's reap (its output still held open by
 * a daemon it started) sent kill(-pgid) to whoever had the number by then.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { nativeBinding, type RawChildHandle } from "../../src/native.js";
import { pidNamespaceMissing, runInPidNamespace } from "../fixtures/pid-namespace.js";
import { eventually, exists, seen, signalSeen, stillRunning } from "../fixtures/process-state.js";
import { rawSpawnOptions } from "../fixtures/raw-spawn.js";

const binding = nativeBinding();
// dist/ is current: the global setup compiled it.
const dist = pathToFileURL(join(resolve(import.meta.dirname, "../.."), "dist/index.js")).href;

/**
 * Run as pid 1 of its own pid namespace (the pid counter is steered there
 * only): a run whose leader exits at once while a daemon keeps its stdout,
 * the leader reaped, a stranger steered onto the old group id, then the
 * run's timeout. Prints what it saw as JSON.
 *
 * The set-up may not take (issue 39, item 2): another task of the namespace
 * (a thread the runtime starts: under Node 24 the test once got `steered: false`)
 * can take the number between the write to ns_last_pid and the stranger's
 * fork, or a loaded machine can let the timeout fire before the stranger is
 * in place (then nothing was tested). Either way the attempt is thrown away
 * (stranger killed, run awaited) and made again, up to ATTEMPTS times; the
 * report says how many it took, or why none did.
 */
const STRANGER_SCENARIO = `
import { spawn as spawnChild } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
const { spawn } = await import(DIST);
const stat = (pid) => { try { return readFileSync("/proc/" + pid + "/stat", "utf8"); } catch { return undefined; } };
const running = (pid) => { const s = stat(pid); return s !== undefined && s.slice(s.lastIndexOf(")") + 2)[0] !== "Z"; };
const TIMEOUT = 2000;
const missed = [];
for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
  const started = performance.now();
  const run = spawn("/bin/sh", ["-c", "setsid sleep 8 & echo $!"], { timeout: TIMEOUT, killGraceMs: 200, reject: false });
  const pgid = run.pid;
  // The leader exits at once and is reaped; the daemon keeps stdout.
  while (stat(pgid) !== undefined) await new Promise((resolve) => setTimeout(resolve, 20));
  writeFileSync("/proc/sys/kernel/ns_last_pid", String(pgid - 1));
  const stranger = spawnChild("/bin/sleep", ["30"], { detached: true, stdio: "ignore" });
  const inTime = performance.now() - started < TIMEOUT;
  if (stranger.pid !== pgid || !inTime) {
    missed.push(stranger.pid !== pgid ? "pid " + pgid + " taken by another task" : "the timeout came first");
    stranger.kill("SIGKILL");
    await run;
    continue;
  }
  const { exitCode, signal, failure } = await run;
  console.log(JSON.stringify({ steered: true, attempts: attempt, strangerRuns: running(pgid), exitCode, signal, failure }));
  process.exit(0);
}
console.log(JSON.stringify({ steered: false, attempts: ATTEMPTS, missed }));
process.exit(0);
`;

describe("a reused process-group id (the pid counter steered in a pid namespace of its own)", () => {
  it.skipIf(pidNamespaceMissing !== undefined)(
    `a timeout after the leader's reap never reaches the process that got its group id${pidNamespaceMissing === undefined ? "" : ` (skipped: ${pidNamespaceMissing})`}`,
    async (context) => {
      const run = await runInPidNamespace(
        STRANGER_SCENARIO.replaceAll("DIST", JSON.stringify(dist)).replaceAll("ATTEMPTS", "5"),
      );
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      const report = JSON.parse(run.stdout) as { steered: boolean; missed?: string[] };
      // The set-up never took: say so, never pass or fail on a scenario that did not happen.
      if (!report.steered) context.skip(`the pid counter could not be steered: ${report.missed}`);
      // Before the fix the stranger, a detached `sleep 30` holding the old group id, got SIGTERM.
      expect(report).toEqual({
        steered: true,
        attempts: expect.any(Number),
        strangerRuns: true,
        exitCode: 0,
        signal: null,
        failure: null,
      });
    },
  );
});

describe.runIf(binding?.spawn !== undefined)("group signals on the addon's handle", () => {
  const start = (script: string) => {
    let handle!: RawChildHandle;
    const exited = new Promise<unknown>((resolve) => {
      handle = binding!.spawn!(
        rawSpawnOptions({
          file: "/bin/sh",
          argv: ["sh", "-c", script],
          stdio: [-1, -2, -1],
          capture: [1],
          captureLimit: 1024,
          onOverflow() {},
          setpgroup: true,
          onExit: resolve,
        }),
      );
    });
    return { handle, exited };
  };

  it("killGroup refuses (-ESRCH) once the leader is reaped, though the group still has a member", async () => {
    const { handle, exited } = start("sleep 2 & exit 0");
    // Reaped at once; the exit waits for the background sleep, which holds stdout.
    expect(await eventually(() => !exists(handle.pid))).toBe(true);
    // Before the fix: 0 (kill(-pgid) went out by number).
    expect(handle.killGroup(0)).toBe(-3);
    await exited;
  });

  it("killGroupAtExit reaches the rest of the group when the leader exits, before its reap", async () => {
    // The member does not hold stdout, so the exit is delivered whether or not it dies.
    const { handle, exited } = start("sleep 30 >/dev/null & exec sleep 30");
    expect(handle.killGroupAtExit!(9)).toBe(0);
    const member = await new Promise<ReturnType<typeof seen>>((resolve) => {
      const poll = setInterval(() => {
        // The member's pid is in its own /proc/<pid>/stat as a member of our group.
        const members = groupMembers(handle.pid).filter((pid) => pid !== handle.pid);
        if (members.length > 0) {
          clearInterval(poll);
          resolve(seen(members[0]!));
        }
      }, 10);
    });
    expect(handle.kill(15)).toBe(0);
    await exited;
    // Removing the signal_group call in OnPidfdReadable leaves the member sleeping: red.
    const died = await eventually(() => !stillRunning(member));
    signalSeen(member);
    expect(died).toBe(true);
    expect(handle.killGroupAtExit!(9)).toBe(-3);
  });
});

function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") out.push(Number(entry));
    } catch {
      // gone while listing
    }
  }
  return out;
}
