/**
 * The addon's positional spawn (native/spawn_args.h), the engine's one call
 * per spawn: every argument type-checked (TypeError naming it, nothing
 * started), the flags and the deadline's numbers read exactly, the exit
 * delivered as arguments, the pid an accessor of the handle.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { nativeBinding, type RawChildHandle, type RawExitCallback } from "../../src/native.js";
import { zombieChildren } from "../fixtures/process-state.js";

const binding = nativeBinding();
const ARGV = Buffer.from("/bin/true\0");
const NO_ENV = Buffer.alloc(0);
const IGNORE = [-1, -1, -1];

/** The positional call with every argument but the ones `change` replaces (by index). */
function call(change: Record<number, unknown>, onExit: RawExitCallback = () => {}): RawChildHandle {
  const args: unknown[] = ["/bin/true", ARGV, 1, NO_ENV, 0, undefined, IGNORE, 0, onExit];
  for (const [index, value] of Object.entries(change)) args[Number(index)] = value;
  return (binding!.spawn as unknown as (...a: unknown[]) => RawChildHandle)(...args);
}

/** Runs a positional spawn to its exit: the arguments onExit got. */
function exitOf(change: Record<number, unknown>): Promise<unknown[]> {
  return new Promise((resolve) => {
    call(change, (...exit) => resolve(exit));
  });
}

describe.runIf(binding?.spawn !== undefined)("native spawn, positional form", () => {
  it.each([
    ["flags that are not a number", { 7: "1" }, /^spawn: flags must be an integer/],
    ["a flag bit beyond the known ones", { 7: 8 }, /^spawn: flags must be an integer/],
    ["fractional flags", { 7: 1.5 }, /^spawn: flags must be an integer/],
    ["a deadline that is no Float64Array", { 9: [1, 15, 0, 1, 9, 0] }, /^spawn: deadline must/],
    ["a deadline of the wrong length", { 9: new Float64Array(5) }, /^spawn: deadline must/],
    ["a deadline with toGroup 2", { 9: Float64Array.of(-1, 15, 2, 0, 9, 0) }, /toGroup/],
    ["a deadline with signal 65", { 9: Float64Array.of(-1, 65, 0, 0, 9, 0) }, /endSignal/],
    [
      "a deadline for the group without a group",
      { 9: Float64Array.of(-1, 15, 1, 0, 9, 0) },
      /toGroup needs setsid or setpgroup/,
    ],
    ["a `more` that is no object", { 10: 5 }, /^spawn: the last argument must be an object/],
    ["a packed argv without its count", { 2: undefined }, /argvCount must be a number/],
    ["an onExit that is no function", { 8: 1 }, /^spawn: onExit must be a function/],
    ["one argument too many", { 11: {} }, /^spawn: too many arguments/],
  ])("refuses %s with a TypeError, starting nothing", (_what, change, message) => {
    expect(() => call(change)).toThrow(TypeError);
    expect(() => call(change)).toThrow(message);
    expect(zombieChildren()).toEqual([]);
  });

  it("delivers the exit as arguments: exitCode, signal, user and system CPU, max RSS, (no output, no tree), exitedAt", async () => {
    const before = Number(process.hrtime.bigint()) / 1e6;
    const exit = await exitOf({ 0: "/bin/sh", 1: Buffer.from("sh\0-c\0exit 3\0"), 2: 3 });
    const after = Number(process.hrtime.bigint()) / 1e6;
    expect(exit).toEqual([
      3,
      null,
      expect.any(Number),
      expect.any(Number),
      null,
      undefined,
      undefined,
      expect.any(Number),
    ]);
    // The reap's CLOCK_MONOTONIC ms (the clock of process.hrtime): between the spawn and its delivery.
    expect(exit[7]).toBeGreaterThan(before);
    expect(exit[7]).toBeLessThan(after);
    const killed = await exitOf({ 0: "/bin/sh", 1: Buffer.from("sh\0-c\0kill -9 $$\0"), 2: 3 });
    expect(killed.slice(0, 2)).toEqual([null, "SIGKILL"]);
  });

  it("appends the captured output when `more` asks for a capture", async () => {
    const exit = await exitOf({
      0: "/bin/sh",
      1: Buffer.from("sh\0-c\0printf out\0"),
      2: 3,
      6: [-1, -2, -1],
      10: { capture: [1], captureLimit: 1024, onOverflow: () => {} },
    });
    expect(exit.slice(0, 2)).toEqual([0, null]);
    expect(String((exit[5] as Buffer[])[1])).toBe("out");
  });

  it("sets the session from the flags (1: setsid) and the group (2: setpgroup)", () => {
    // pgrp and session: the 3rd and 4th fields after the command name in stat(5).
    const groupAndSession = (pid: number | "self") =>
      readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ").slice(2, 4);
    const started = (flags: number) => {
      const handle = call({
        0: "/bin/sleep",
        1: Buffer.from("sleep\u00005\u0000"),
        2: 2,
        7: flags,
      });
      const ids = groupAndSession(handle.pid);
      handle.kill(9);
      return { pid: String(handle.pid), ids };
    };
    const [ourGroup, ourSession] = groupAndSession("self");
    expect(started(0).ids).toEqual([ourGroup, ourSession]);
    const session = started(1);
    expect(session.ids).toEqual([session.pid, session.pid]);
    const group = started(2);
    expect(group.ids).toEqual([group.pid, ourSession]);
  });

  it("takes the child path unless flag 4 asks for posix_spawn", async () => {
    const missing = (flags: number) => {
      try {
        call({ 0: "/nonexistent/program", 7: flags });
      } catch (error) {
        return (error as { syscall?: string }).syscall;
      }
      return undefined;
    };
    expect(missing(0)).toBe("execve");
    expect(missing(4)).toBe("posix_spawn");
  });

  it("gives the pid through an accessor, no property of the handle's own", async () => {
    let handle: RawChildHandle | undefined;
    await new Promise((resolve) => {
      handle = call({}, resolve);
    });
    expect(handle!.pid).toBeGreaterThan(0);
    expect(Object.hasOwn(handle!, "pid")).toBe(false);
  });
});
