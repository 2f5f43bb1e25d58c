/**
 * A process group is signalled by number only while its leader is unreaped:
 * until the reap the leader (a zombie at worst) pins the group id; after it
 * the number may belong to anyone (issue 11, bug 3). Before the fix a
 * timeout that fired after the leader's reap (its output still held open by
 * a daemon it started) sent kill(-pgid) to whoever had the number by then.
 */
import { spawn as spawnChild } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { spawn } from "../../src/index.js";
import { nativeBinding, type RawChildHandle } from "../../src/native.js";
import { eventually, exists, isRunning } from "../fixtures/process-state.js";
import { rawSpawnOptions } from "../fixtures/raw-spawn.js";

const binding = nativeBinding();
const isRoot = process.getuid?.() === 0;

function killQuietly(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

describe.runIf(isRoot)("a reused process-group id (pid counter steered as root)", () => {
  it("a timeout after the leader's reap never reaches the process that got its group id", async () => {
    // Other processes on the machine fork too and may take the number first: retry.
    for (let attempt = 0; attempt < 30; attempt++) {
      const run = spawn("/bin/sh", ["-c", "setsid sleep 4 & echo $!"], {
        timeout: 700,
        killGraceMs: 200,
        reject: false,
      });
      const pgid = run.pid!;
      // The leader exits at once and is reaped; the daemon keeps stdout open.
      await eventually(() => !exists(pgid));
      writeFileSync("/proc/sys/kernel/ns_last_pid", String(pgid - 1));
      const stranger = spawnChild("/bin/sleep", ["30"], { detached: true, stdio: "ignore" });
      const result = await run;
      const alive = stranger.pid !== undefined && isRunning(stranger.pid);
      killQuietly(stranger.pid);
      killQuietly(Number(String(result.stdout).trim()));
      if (stranger.pid !== pgid) continue;
      // Before the fix the stranger, a detached `sleep 30` holding the old group id, got SIGTERM.
      expect(alive).toBe(true);
      expect(result).toMatchObject({ exitCode: 0, signal: null, failure: null });
      return;
    }
    throw new Error("the pid counter could not be steered onto the old group id in 30 attempts");
  });
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
    const member = await new Promise<number>((resolve) => {
      const poll = setInterval(() => {
        // The member's pid is in its own /proc/<pid>/stat as a member of our group.
        const members = groupMembers(handle.pid).filter((pid) => pid !== handle.pid);
        if (members.length > 0) {
          clearInterval(poll);
          resolve(members[0]!);
        }
      }, 10);
    });
    expect(handle.kill(15)).toBe(0);
    await exited;
    // Removing the signal_group call in OnPidfdReadable leaves the member sleeping: red.
    const died = await eventually(() => !isRunning(member));
    killQuietly(member);
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
