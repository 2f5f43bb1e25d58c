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
 */
const STRANGER_SCENARIO = `
import { spawn as spawnChild } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
const { spawn } = await import(DIST);
const stat = (pid) => { try { return readFileSync("/proc/" + pid + "/stat", "utf8"); } catch { return undefined; } };
const running = (pid) => { const s = stat(pid); return s !== undefined && s.slice(s.lastIndexOf(")") + 2)[0] !== "Z"; };
const run = spawn("/bin/sh", ["-c", "setsid sleep 4 & echo $!"], { timeout: 700, killGraceMs: 200, reject: false });
const pgid = run.pid;
// The leader exits at once and is reaped; the daemon keeps stdout.
while (stat(pgid) !== undefined) await new Promise((resolve) => setTimeout(resolve, 20));
writeFileSync("/proc/sys/kernel/ns_last_pid", String(pgid - 1));
const stranger = spawnChild("/bin/sleep", ["30"], { detached: true, stdio: "ignore" });
const result = await run;
const { exitCode, signal, failure } = result;
console.log(JSON.stringify({ steered: stranger.pid === pgid, strangerRuns: running(pgid), exitCode, signal, failure }));
process.exit(0);
`;

describe("a reused process-group id (the pid counter steered in a pid namespace of its own)", () => {
  it.skipIf(pidNamespaceMissing !== undefined)(
    `a timeout after the leader's reap never reaches the process that got its group id${pidNamespaceMissing === undefined ? "" : ` (skipped: ${pidNamespaceMissing})`}`,
    async () => {
      const run = await runInPidNamespace(
        STRANGER_SCENARIO.replaceAll("DIST", JSON.stringify(dist)),
      );
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      // Before the fix the stranger, a detached `sleep 30` holding the old group id, got SIGTERM.
      expect(JSON.parse(run.stdout)).toEqual({
        steered: true,
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
