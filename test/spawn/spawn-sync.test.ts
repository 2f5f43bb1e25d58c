/**
 * spawnSync on whichever engine this project runs (the native project: the
 * addon's poll loop; the fallback project: child_process.spawnSync). Every
 * check reads what the real child saw or what the kernel says about it
 * afterwards (/proc), never what the library meant to do.
 */
import { Buffer } from "node:buffer";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { nativeStatus, SpawnError, SubprocessError, spawnSync } from "../../src/index.js";
import { inspectBinary } from "../fixtures/build.js";
import {
  eventually,
  isRunning,
  openFds,
  seen,
  signalSeen,
  zombieChildren,
} from "../fixtures/process-state.js";

const native = nativeStatus().loaded;

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe(`spawnSync (${native ? "native" : "fallback"})`, () => {
  let inspect: string;
  beforeAll(() => {
    inspect = inspectBinary();
  });

  it("returns the exit, both captured streams and the engine", () => {
    const result = spawnSync("/bin/sh", ["-c", "printf out; printf err >&2; exit 3"], {
      reject: false,
    });
    expect(result).toMatchObject({
      exitCode: 3,
      signal: null,
      stdout: "out",
      stderr: "err",
      native,
      failure: "exit",
    });
    expect(result.pid).toBeGreaterThan(0);
    expect(result.resourceUsage === null).toBe(!native);
  });

  it("a death by a real-time signal is never a clean exit", () => {
    // Node has no name for SIGRTMIN+n: child_process.spawnSync reports status
    // null and signal "" (docs/fallback.md); the native engine names it.
    const result = spawnSync("/bin/sh", ["-c", "kill -s RTMIN+6 $$"], { reject: false });
    expect(result).toMatchObject({ failure: "signal", exitCode: null });
    expect(result.signal).toBe(native ? "SIGRTMIN+6" : "");
  });

  it("passes exactly the environment given, in order", () => {
    const env = ["B=2", "A=1", "EMPTY=", "UNICODE=é✓"];
    const result = spawnSync(inspect, ["environ"], { env, encoding: "buffer" });
    expect(result.stdout).toEqual(Buffer.from(`${env.join("\0")}\0`));
    expect(spawnSync(inspect, ["environ"], { encoding: "buffer" }).stdout).toEqual(Buffer.alloc(0));
  });

  it.runIf(native)("passes non-UTF-8 bytes exactly (native only)", () => {
    const raw = Buffer.from([0x58, 0x3d, 0xff, 0xfe, 0x80]);
    const result = spawnSync(inspect, ["environ"], { env: [raw], encoding: "buffer" });
    expect(result.stdout).toEqual(Buffer.concat([raw, Buffer.from([0])]));
  });

  it("writes input while reading both outputs (no deadlock on full pipes)", () => {
    const input = Buffer.alloc(1 << 20, 0x61);
    const result = spawnSync("/bin/sh", ["-c", "cat; head -c 1048576 /dev/zero >&2"], {
      input,
      encoding: "buffer",
    });
    expect((result.stdout as Buffer).equals(input)).toBe(true);
    expect((result.stderr as Buffer).length).toBe(1 << 20);
  });

  it("throws a SubprocessError for a failed run, with its outcome", () => {
    const error = thrown(() => spawnSync("/bin/sh", ["-c", "printf x; exit 4"])) as SubprocessError;
    expect(error).toBeInstanceOf(SubprocessError);
    expect(error).toMatchObject({ reason: "exit", exitCode: 4, stdout: "x" });
  });

  it("reports a signal by name", () => {
    const result = spawnSync("/bin/sh", ["-c", "kill -USR1 $$"], { reject: false });
    expect(result).toMatchObject({ exitCode: null, signal: "SIGUSR1", failure: "signal" });
  });

  it("a timeout ends the run with killSignal", () => {
    const result = spawnSync("/bin/sleep", ["1000"], {
      timeout: 100,
      killSignal: "SIGKILL",
      reject: false,
    });
    expect(result).toMatchObject({ failure: "timeout", signal: "SIGKILL" });
    expect(isRunning(result.pid)).toBe(false);
  });

  it.runIf(native)("a timeout kills the whole process group, grandchildren included", async () => {
    // Signalling only the leader stays green here: the group's SIGKILL at the leader's exit
    // takes the sleep anyway. spawn-sync-group-signal.test.ts sees that mutant (issue 27).
    const result = spawnSync("/bin/sh", ["-c", "/bin/sleep 1000 >/dev/null & echo $!; wait"], {
      timeout: 200,
      reject: false,
    });
    const grandchild = Number(String(result.stdout).trim());
    const sleeper = seen(grandchild); // undefined when the group kill already took it
    expect(result.failure).toBe("timeout");
    expect(grandchild).toBeGreaterThan(0);
    const gone = await eventually(() => !isRunning(grandchild));
    signalSeen(sleeper);
    expect(gone).toBe(true);
  });

  it.runIf(native)("escalates to SIGKILL after the grace when killSignal is ignored", () => {
    const result = spawnSync("/bin/sh", ["-c", 'trap "" TERM; while :; do :; done'], {
      timeout: 100,
      killGraceMs: 100,
      reject: false,
    });
    expect(result).toMatchObject({ failure: "timeout", signal: "SIGKILL" });
  });

  it.runIf(native)(
    "a leader that exited in time is no timeout, even when a descendant holds its stdout",
    () => {
      const result = spawnSync("/bin/sh", ["-c", "/bin/sleep 1000 & echo $!"], { timeout: 300 });
      const grandchild = Number(String(result.stdout).trim());
      signalSeen(seen(grandchild)); // still sleeping: the pid is its own
      expect(result).toMatchObject({ exitCode: 0, signal: null, failure: null });
      expect(grandchild).toBeGreaterThan(0);
    },
  );

  it("maxBuffer ends the run and keeps at most that many bytes", () => {
    const result = spawnSync("/bin/sh", ["-c", "head -c 1000000 /dev/zero"], {
      maxBuffer: 1000,
      encoding: "buffer",
      reject: false,
    });
    expect(result.failure).toBe("maxBuffer");
    expect((result.stdout as Buffer).length).toBeLessThanOrEqual(1000);
    if (native) expect((result.stdout as Buffer).length).toBe(1000);
  });

  it("throws a Node-style error when the exec fails", () => {
    const error = thrown(() => spawnSync("/nonexistent/program")) as NodeJS.ErrnoException;
    expect(error).toMatchObject({ code: "ENOENT", path: "/nonexistent/program" });
    // The default start path, the child path, reports the execve itself.
    expect(error.syscall).toBe(native ? "execve" : "spawn");
  });

  it("names a missing cwd", () => {
    const cwd = join(tmpdir(), `exactspawn-sync-missing-${process.pid}`);
    rmSync(cwd, { recursive: true, force: true });
    const error = thrown(() => spawnSync("/bin/true", [], { cwd })) as NodeJS.ErrnoException;
    expect(error).toMatchObject({ code: "ENOENT", syscall: "chdir", path: cwd });
  });

  it("refuses an exec too large for the kernel before starting anything", () => {
    const error = thrown(() =>
      spawnSync("/bin/true", [], { env: { BIG: "x".repeat(200_000) } }),
    ) as SpawnError;
    expect(error).toBeInstanceOf(SpawnError);
    expect(error.offenders).toEqual([{ kind: "env", name: "BIG", bytes: 200_005 }]);
  });

  it("refuses what only a running child can use, and pipes nobody can read", () => {
    expect(() =>
      spawnSync("/bin/true", [], { signal: new AbortController().signal } as never),
    ).toThrow(/spawnSync: options\.signal/);
    expect(() => spawnSync("/bin/true", [], { ref: false } as never)).toThrow(
      /spawnSync: options\.ref/,
    );
    expect(() => spawnSync("/bin/true", [], { cleanup: true } as never)).toThrow(
      /spawnSync: options\.cleanup/,
    );
    expect(() => spawnSync("/bin/true", [], { stdio: ["ignore", "pipe", "pipe", "pipe"] })).toThrow(
      TypeError,
    );
  });

  it("leaves no fd and no zombie behind, whatever the outcome", () => {
    const before = openFds();
    for (let i = 0; i < 5; i++) {
      spawnSync("/bin/sh", ["-c", "echo x; exit 1"], { reject: false, input: "in" });
      spawnSync("/bin/sleep", ["10"], { timeout: 50, reject: false });
      spawnSync("/bin/sh", ["-c", "head -c 100000 /dev/zero"], { maxBuffer: 10, reject: false });
      thrown(() => spawnSync("/nonexistent/program"));
    }
    expect(openFds()).toEqual(before);
    expect(zombieChildren()).toEqual([]);
  });
});
