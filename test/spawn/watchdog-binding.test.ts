/**
 * The addon's side of `cleanup`: spawn's `cleanup` flag and startWatchdog()
 * check their inputs (TypeError, never a coercion), a cleanup spawn is
 * refused before the watchdog was started, and a watchdog that cannot start
 * is a Node-style system error. Nothing here starts a watchdog (the real
 * processes are in watchdog.test.ts, run in hosts of their own).
 */
import { describe, expect, it } from "vitest";
import { nativeBinding } from "../../src/native.js";
import { rawSpawnOptions } from "../fixtures/raw-spawn.js";

const binding = nativeBinding();

describe.runIf(binding?.startWatchdog !== undefined)("native watchdog binding", () => {
  const spawn = (o: Record<string, unknown>) => binding!.spawn!(rawSpawnOptions(o));
  const start = (o: unknown) =>
    binding!.startWatchdog!(o as { file: string; argv: readonly string[] });

  it("spawn: cleanup must be a boolean and needs a group of the child's own", () => {
    expect(() => spawn({ cleanup: 1 })).toThrow(/spawn: cleanup must be a boolean/);
    expect(() => spawn({ cleanup: true })).toThrow(TypeError);
    expect(() => spawn({ cleanup: true })).toThrow(/cleanup needs setsid or setpgroup/);
  });

  it("spawn: a cleanup child is refused, before it starts, until startWatchdog() succeeded", () => {
    expect(() => spawn({ cleanup: true, setpgroup: true })).toThrow(
      /cleanup needs startWatchdog\(\) first/,
    );
  });

  it("startWatchdog: one options object with an absolute file and 1 to 64 argv strings", () => {
    expect(() => start(undefined)).toThrow(/expected exactly one options object/);
    expect(() => start({ file: "sh", argv: ["sh"] })).toThrow(/file must be an absolute path/);
    expect(() => start({ file: 5, argv: ["sh"] })).toThrow(/file must be a string/);
    expect(() => start({ file: "/bin/sh", argv: [] })).toThrow(/argv must have 1 to 64/);
    expect(() => start({ file: "/bin/sh", argv: new Array(65).fill("x") })).toThrow(
      /argv must have 1 to 64/,
    );
    expect(() => start({ file: "/bin/sh", argv: ["sh", 1] })).toThrow(/argv\[1\] must be a string/);
    expect(() => start({ file: "/bin/sh", argv: ["s\0h"] })).toThrow(/argv\[0\] contains a NUL/);
  });

  it("startWatchdog: a program that cannot start is a system error naming it", () => {
    let error: unknown;
    try {
      start({ file: "/nonexistent/exactspawn-watchdog", argv: ["x"] });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({
      code: "ENOENT",
      syscall: "posix_spawn",
      path: "/nonexistent/exactspawn-watchdog",
    });
    // Still not started: cleanup spawns stay refused.
    expect(() => spawn({ cleanup: true, setpgroup: true })).toThrow(/startWatchdog\(\) first/);
  });
});
