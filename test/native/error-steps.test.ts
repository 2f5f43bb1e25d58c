/**
 * Every native failure is one Node-style system error naming the call that
 * failed (`syscall`) and the library step it belongs to (`step`), built in
 * one place (native/system_error.cc from a core StepFailure). Each failure
 * below is forced for real: a missing program on each path, a cwd that does
 * not exist (a refused rlimit: exec-controls.test.ts), and a host out of fds
 * (EMFILE) at each step that opens one, the exit watch's epoll, timerfd and
 * eventfd included.
 * Before this, spawnSync's wait failures said syscall "spawnSync", the
 * watchdog's every failure "posix_spawn", and no error named its step.
 * Not forceable from outside: the prctl failures (parentDeathSignal,
 * noNewPrivileges, the sandbox: the kernel accepts every value the binding
 * lets through), a watch refused during teardown and an allocation failure.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus, spawn, spawnSync } from "../../src/index.js";
import { type NativeBinding, nativeBinding } from "../../src/native.js";
import { removeDir, runHost, scratchDir } from "../faults/host.js";

const native = nativeStatus().loaded;

function fields(error: unknown) {
  const e = error as Record<string, unknown>;
  return { code: e["code"], syscall: e["syscall"], step: e["step"] };
}

function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe.runIf(native)("native failures name their call and step", () => {
  it.each([
    [
      "a missing program (the default start path, the child path)",
      "/nonexistent/program",
      {},
      { code: "ENOENT", syscall: "execve", step: "exec" },
    ],
    [
      "a missing program on the child path",
      "/nonexistent/program",
      { umask: 0o22 },
      { code: "ENOENT", syscall: "execve", step: "exec" },
    ],
    [
      "a missing program on the helper child path (reported through its pipe)",
      "/nonexistent/program",
      { uid: process.getuid!() },
      { code: "ENOENT", syscall: "execve", step: "exec" },
    ],
    [
      "a cwd that does not exist",
      "/bin/true",
      { cwd: "/nonexistent/dir" },
      { code: "ENOENT", syscall: "chdir", step: "cwd" },
    ],
  ] as const)("%s: spawn and spawnSync", async (_what, file, options, expected) => {
    const asyncError = await spawn(file, [], options as never).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(fields(asyncError)).toEqual(expected);
    expect(fields(thrownBy(() => spawnSync(file, [], options as never)))).toEqual(expected);
  });
});

describe.runIf(native)("the helper child path reports its step through its pipe", () => {
  it("a refused rlimit in a child that changes its uid: setrlimit, step rlimits", async () => {
    const binding = nativeBinding() as Required<NativeBinding>;
    // Not waited for at its start: the failure arrives with the exit.
    const exit = await new Promise<unknown>((resolve) => {
      binding.spawn({
        file: "/bin/true",
        argv: ["true"],
        envp: [],
        stdio: [-1, -1, -1],
        controls: { uid: process.getuid!(), rlimits: [["nofile", 10, 5]] },
        onExit: resolve,
      });
    });
    expect(exit).toBeInstanceOf(Error);
    expect(fields(exit)).toEqual({ code: "EINVAL", syscall: "setrlimit", step: "rlimits" });
  });
});

describe.runIf(native)("a host out of fds: each step that opens one names itself", () => {
  let dir: string;
  beforeAll(() => {
    dir = scratchDir("exactspawn-steps-");
  });
  afterAll(() => removeDir(dir));

  it("spawnSync's wait and stdio, spawn's watch, the cleanup watchdog, the spill memfd", () => {
    const run = runHost<Record<string, unknown>>(
      dir,
      `
      import { execFileSync } from "node:child_process";
      import { closeSync, openSync } from "node:fs";
      const { spawn, spawnSync } = await import(DIST);
      const { nativeBinding } = await import(new URL("native.js", DIST).href);
      // Warm up what opens fds lazily (the engine, console output).
      spawnSync("/bin/true");
      await spawn("/bin/true");
      console.log("warm");
      execFileSync("prlimit", ["--pid", String(process.pid), "--nofile=64:4096"]);
      const held = [];
      for (;;) {
        try { held.push(openSync("/dev/null", "r")); } catch { break; }
      }
      const pick = (e) => ({ code: e?.code, syscall: e?.syscall, step: e?.step });
      const out = {};
      // stdio "inherit": the child needs no new fd, so the parent's first one is the pidfd.
      try { spawnSync("/bin/true", [], { stdio: "inherit" }); } catch (e) { out.syncWait = pick(e); }
      try { spawnSync("/bin/true", [], { stdio: ["inherit", "pipe", "inherit"] }); } catch (e) { out.syncStdio = pick(e); }
      try { await spawn("/bin/true", [], { stdio: "inherit" }); } catch (e) { out.asyncWatch = pick(e); }
      try { await spawn("/bin/true", [], { stdio: "inherit", cleanup: true }); } catch (e) { out.cleanup = pick(e); }
      try { nativeBinding().sealedMemfd("values", Buffer.from("x")); } catch (e) { out.memfd = pick(e); }
      for (const fd of held) closeSync(fd);
      report(out);
      `,
    );
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" });
    expect(run.report).toEqual({
      syncWait: { code: "EMFILE", syscall: "pidfd_open", step: "wait" },
      syncStdio: { code: "EMFILE", syscall: "pipe2", step: "stdio" },
      asyncWatch: { code: "EMFILE", syscall: "pidfd_open", step: "watch" },
      cleanup: { code: "EMFILE", syscall: "pipe2", step: "cleanup" },
      memfd: { code: "EMFILE", syscall: "memfd_create", step: "memfd" },
    });
  });

  it("the exit watch's own fds (epoll, timerfd, eventfd), opened at the first spawn", () => {
    // A fresh host per count of free fds: 0, 1, 2, 3 free when the first
    // spawn opens the watch's three fds after the child's pidfd.
    const outcomes = [0, 1, 2, 3].map((free) => {
      const run = runHost<Record<string, unknown>>(
        dir,
        `
        import { execFileSync } from "node:child_process";
        import { closeSync, openSync } from "node:fs";
        const { spawn } = await import(DIST);
        execFileSync("prlimit", ["--pid", String(process.pid), "--nofile=64:4096"]);
        const held = [];
        for (;;) {
          try { held.push(openSync("/dev/null", "r")); } catch { break; }
        }
        for (let i = 0; i < ${free} + 1; i++) closeSync(held.pop()); // one more for the pidfd
        let out = { ok: true };
        try { await spawn("/bin/true", [], { stdio: "inherit" }); } catch (e) { out = { code: e?.code, syscall: e?.syscall, step: e?.step }; }
        for (const fd of held) closeSync(fd);
        report(out);
        `,
      );
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" });
      return run.report;
    });
    expect(outcomes).toEqual([
      { code: "EMFILE", syscall: "epoll_create1", step: "watch" },
      { code: "EMFILE", syscall: "timerfd_create", step: "watch" },
      { code: "EMFILE", syscall: "eventfd", step: "watch" },
      { ok: true },
    ]);
  });
});
