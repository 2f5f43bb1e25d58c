/**
 * The addon's own contract: it type-checks its one options object (TypeError,
 * never a coercion), reports exec failures as Node-style errors, and its
 * handles behave after the child is gone.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  nativeBinding,
  type RawChildExit,
  type RawChildHandle,
  type RawSpawnOptions,
} from "../../src/native.js";
import { eventually, openFds } from "../fixtures/process-state.js";
import { rawSpawnOptions } from "../fixtures/raw-spawn.js";

const binding = nativeBinding();

describe.runIf(binding?.spawn !== undefined)("native spawn binding", () => {
  const spawn = (o: Partial<RawSpawnOptions>) => binding!.spawn!(rawSpawnOptions(o));

  it.each([
    ["a missing options object", undefined],
    ["a relative file", { file: "bin/true" }],
    ["a non-array argv", { argv: "true" }],
    ["an empty argv", { argv: [] }],
    ["a number in envp", { envp: [1] }],
    ["a NUL in argv", { argv: ["a\0b"] }],
    ["too few stdio slots", { stdio: [-1, -1] }],
    ["a fractional fd", { stdio: [0.5, -1, -1] }],
    ["a string setsid", { setsid: "yes" }],
    ["a missing onExit", { onExit: undefined }],
    ["an fd below -2", { stdio: [-3, -1, -1] }],
    ["a capture of a slot that is no pipe", { stdio: [-1, -1, -2], capture: [1] }],
    ["a capture of stdin", { stdio: [-2, -2, -2], capture: [0] }],
    ["a repeated capture", { stdio: [-1, -2, -2], capture: [1, 1], captureLimit: 1 }],
    ["a capture without captureLimit", { stdio: [-1, -2, -1], capture: [1], onOverflow() {} }],
    ["a capture with captureLimit 0", { stdio: [-1, -2, -1], capture: [1], captureLimit: 0 }],
    ["a capture without onOverflow", { stdio: [-1, -2, -1], capture: [1], captureLimit: 9 }],
  ])("throws TypeError for %s", (_what, options) => {
    expect(() =>
      options === undefined
        ? (binding!.spawn as unknown as () => void)()
        : spawn(options as Partial<RawSpawnOptions>),
    ).toThrow(TypeError);
  });

  describe("packed argv and envp (one Buffer of NUL-terminated strings and a count)", () => {
    const packed = (strings: string[]) => Buffer.from(strings.map((x) => `${x}\0`).join(""));
    const environOf = (o: Partial<RawSpawnOptions>) =>
      new Promise<Buffer | null | undefined>((resolve) => {
        spawn({
          file: "/bin/cat",
          argv: packed(["cat", "/proc/self/environ"]),
          argvCount: 2,
          stdio: [-1, -2, -1],
          capture: [1],
          captureLimit: 1 << 24,
          onOverflow() {},
          onExit: (e) => resolve((e as RawChildExit).output?.[1]),
          ...o,
        });
      });

    it("passes 10,000 packed variables byte for byte, in order", async () => {
      const env = Array.from({ length: 10_000 }, (_, i) => `V${9999 - i}=${"x".repeat(90)}é`);
      const bytes = packed(env);
      const environ = await environOf({ envp: bytes, envpCount: env.length });
      // Buffer#equals: a deep toEqual of a megabyte takes seconds.
      expect(environ?.length).toBe(bytes.length);
      expect(environ?.equals(bytes)).toBe(true);
      expect(await environOf({ envp: Buffer.alloc(0), envpCount: 0 })).toEqual(Buffer.alloc(0));
    });

    it.each([
      ["a NUL inside a string (more strings than the count)", packed(["A=1\0B=2"]), 1],
      ["fewer strings than the count", packed(["A=1"]), 2],
      ["no NUL at the end", Buffer.from("A=1"), 1],
      ["a count beyond the length", packed(["A"]), 3],
      ["a fractional count", packed(["A=1"]), 0.5],
      ["a missing count", packed(["A=1"]), undefined],
      ["a string count", packed(["A=1"]), "1"],
    ])("refuses %s with a TypeError, starting nothing", (_what, envp, envpCount) => {
      expect(() =>
        spawn({
          envp,
          envpCount: envpCount as number,
          onExit: () => {
            throw new Error("nothing may start");
          },
        }),
      ).toThrow(TypeError);
    });

    it("refuses an empty packed argv", () => {
      expect(() => spawn({ argv: Buffer.alloc(0), argvCount: 0 })).toThrow(
        new TypeError("spawn: argv must not be empty"),
      );
    });

    it("checks the bytes after the last option is read (a getter cannot slip a change in)", () => {
      const withGetter = (argv: Buffer, change: () => void) =>
        Object.defineProperty({ ...rawSpawnOptions({ argv, argvCount: 1 }) }, "onExit", {
          enumerable: true,
          get() {
            change();
            return () => {
              throw new Error("nothing may start");
            };
          },
        }) as RawSpawnOptions;
      // The terminator overwritten by a getter read later.
      const unterminated = Buffer.from("true\0", "latin1");
      expect(() =>
        binding!.spawn!(withGetter(unterminated, () => unterminated.write("x", 4, "latin1"))),
      ).toThrow(TypeError);
      // The bytes detached by a getter read later (a detached Buffer has length 0).
      const backing = new ArrayBuffer(5);
      const detachable = Buffer.from(backing);
      detachable.write("true\0", "latin1");
      expect(() =>
        binding!.spawn!(
          withGetter(detachable, () => structuredClone(backing, { transfer: [backing] })),
        ),
      ).toThrow(TypeError);
      expect(detachable.length).toBe(0);
    });
  });

  it("throws a Node-style error for a failed exec", () => {
    expect(() => spawn({ file: "/nonexistent" })).toThrow(
      expect.objectContaining({
        code: "ENOENT",
        errno: -2,
        syscall: "posix_spawn",
        path: "/nonexistent",
        message: "posix_spawn ENOENT /nonexistent",
      }),
    );
  });

  it("reads a cwd of every length around its 256-byte string buffer whole, in 1- to 4-byte characters", async () => {
    const root = mkdtempSync(join(tmpdir(), "exactspawn-cwd-"));
    const pwdOf = (cwd: string) =>
      new Promise<string>((resolve) => {
        spawn({
          file: "/bin/pwd",
          argv: ["pwd"],
          cwd,
          stdio: [-1, -2, -1],
          capture: [1],
          captureLimit: 4096,
          onOverflow() {},
          onExit: (e) => resolve(String((e as RawChildExit).output?.[1]).trimEnd()),
        });
      });
    try {
      for (const character of ["a", "é", "€", "😀"]) {
        for (let bytes = 244; bytes <= 262; bytes++) {
          // `bytes` long: the characters, then ASCII up to the length.
          let cwd = `${root}/`;
          while (Buffer.byteLength(cwd + character) <= bytes) cwd += character;
          cwd += "b".repeat(bytes - Buffer.byteLength(cwd));
          mkdirSync(cwd);
          expect(await pwdOf(cwd)).toBe(cwd);
          rmSync(cwd, { recursive: true });
        }
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("delivers the exit once, with the handle as this, then refuses signals", async () => {
    // A raw counter, not a Promise: a Promise would hide a second delivery.
    const deliveries: { exit: RawChildExit; self: unknown }[] = [];
    let handle!: RawChildHandle;
    await new Promise<void>((resolve) => {
      handle = spawn({
        stdio: [-1, -2, -2],
        capture: [1, 2],
        captureLimit: 64,
        onOverflow() {},
        onExit(this: unknown, e) {
          deliveries.push({ exit: e as RawChildExit, self: this });
          resolve();
        },
      });
      expect(handle.hasRef()).toBe(true);
      handle.unref();
      expect(handle.hasRef()).toBe(false);
      handle.ref();
    });
    // Every handle's close callback and any late event have had their turn.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 50));
    handle.endCaptureAtExit!();
    expect(handle.takeOver!(1)).toBeNull();
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.exit).toMatchObject({ exitCode: 0, signal: null });
    expect(deliveries[0]!.self).toBe(handle);
    expect(handle.kill(15)).toBe(-3);
    expect(handle.killGroup(15)).toBe(-3);
    expect(handle.hasRef()).toBe(false);
  });

  it("pipe() returns two close-on-exec fds and closeFd closes them", () => {
    const [r, w] = binding!.pipe!();
    expect(r).toBeGreaterThan(2);
    expect(binding!.closeFd!(r)).toBe(0);
    expect(binding!.closeFd!(w)).toBe(0);
    expect(binding!.closeFd!(w)).toBe(-9);
  });

  const start = (script: string, o: Partial<RawSpawnOptions>) => {
    const overflows: number[] = [];
    let handle!: RawChildHandle;
    const exited = new Promise<RawChildExit>((resolve) => {
      handle = spawn({
        file: "/bin/sh",
        argv: ["sh", "-c", script],
        onOverflow: (slot) => overflows.push(slot),
        onExit: (e) => resolve(e as RawChildExit),
        ...o,
      });
    });
    return { handle, overflows, exited };
  };
  // The pidfd is closed in a libuv close callback, just after the exit.
  const settledFds = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    return openFds();
  };
  const sh = async (script: string, o: Partial<RawSpawnOptions>) => {
    const { handle, overflows, exited } = start(script, o);
    return { exit: await exited, handle, overflows };
  };

  it("makes a pipe for each -2 slot and hands back the parent ends it does not capture", async () => {
    const before = await settledFds();
    const { exit, handle } = await sh("echo out; echo err >&2", { stdio: [-1, -2, -2] });
    expect(exit.output).toBeUndefined();
    const fds = handle.fds!;
    expect(fds[0]).toBe(-1);
    expect(readFileSync(fds[1]!, "utf8")).toBe("out\n");
    expect(readFileSync(fds[2]!, "utf8")).toBe("err\n");
    for (const fd of fds.slice(1)) expect(binding!.closeFd!(fd)).toBe(0);
    expect(await settledFds()).toEqual(before);
  });

  it("closes every pipe end it made when the spawn fails", async () => {
    const before = await settledFds();
    expect(() =>
      spawn({
        file: "/nonexistent",
        stdio: [-2, -2, -2],
        capture: [1, 2],
        captureLimit: 9,
        onOverflow() {},
      }),
    ).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(await settledFds()).toEqual(before);
  });

  it("reads captured pipes itself and delivers their bytes with the exit", async () => {
    const before = await settledFds();
    const { exit, handle } = await sh("echo out; echo err >&2; exit 3", {
      stdio: [-1, -2, -2],
      capture: [1, 2],
      captureLimit: 100,
    });
    expect(handle.fds).toBeUndefined();
    expect(exit).toMatchObject({ exitCode: 3 });
    expect(exit.output).toEqual([null, Buffer.from("out\n"), Buffer.from("err\n")]);
    expect(await settledFds()).toEqual(before);
  });

  it("waits for a captured pipe a grandchild still holds", async () => {
    // The grandchild writes only once its parent shell is gone (reaped:
    // `kill -0` fails), so the pipe outlives the child for certain.
    const { exit } = await sh(
      "(while kill -0 $$ 2>/dev/null; do sleep 0.01; done; echo late) & echo early",
      { stdio: [-1, -2, -1], capture: [1], captureLimit: 100 },
    );
    expect(exit.output?.[1]?.toString()).toBe("early\nlate\n");
  });

  it("never blocks the event loop on a captured pipe that is open but empty", async () => {
    // The child writes, then waits for a file only this event loop creates: a
    // read that blocked on the drained pipe would never let the timer run.
    const dir = mkdtempSync(join(tmpdir(), "exactspawn-nonblock-"));
    const flag = join(dir, "go");
    try {
      const { exited } = start(
        `echo early; until [ -e '${flag}' ]; do sleep 0.01; done; echo late`,
        {
          stdio: [-1, -2, -1],
          capture: [1],
          captureLimit: 100,
        },
      );
      setTimeout(() => writeFileSync(flag, ""), 50);
      const exit = await exited;
      expect(exit.output?.[1]?.toString()).toBe("early\nlate\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps captureLimit bytes, closes the pipe and reports the overflow", async () => {
    const { exit, overflows } = await sh("exec yes", {
      stdio: [-1, -2, -1],
      capture: [1],
      captureLimit: 1000.5,
    });
    expect(overflows).toEqual([1]);
    // yes writes on into the closed pipe: EPIPE/SIGPIPE ends it.
    expect(exit.signal).toBe("SIGPIPE");
    expect(exit.output?.[1]).toEqual(Buffer.from("y\n".repeat(500)));
  });

  // The overflow callback is JavaScript: it may end the capture or take the
  // other pipe over, which makes the exit deliverable at once. The watch must
  // still be alive when the addon returns from that callback (under ASan a
  // freed watch touched afterwards is a heap-use-after-free: seen red with
  // `npm run test:asan -- test/spawn/native-binding.test.ts` on 08fb2db).
  // The grandchild overflows only once the child is reaped (`kill -0` fails).
  const lateOverflow =
    "(while kill -0 $$ 2>/dev/null; do sleep 0.01; done; head -c 300 /dev/zero) &";
  it("survives an overflow callback that ends the capture of a reaped child", async () => {
    const deliveries: RawChildExit[] = [];
    const exit = await new Promise<RawChildExit>((resolve) => {
      spawn({
        file: "/bin/sh",
        argv: ["sh", "-c", lateOverflow],
        stdio: [-1, -2, -1],
        capture: [1],
        captureLimit: 100,
        onOverflow(this: RawChildHandle) {
          this.endCaptureAtExit!();
          // The exit is delivered after this callback returns, never inside it.
          expect(deliveries).toHaveLength(0);
        },
        onExit(e) {
          deliveries.push(e as RawChildExit);
          resolve(e as RawChildExit);
        },
      });
    });
    expect(exit).toMatchObject({ exitCode: 0, signal: null });
    expect(exit.output?.[1]).toEqual(Buffer.alloc(100));
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect(deliveries).toHaveLength(1);
  });

  it("survives an overflow callback that takes the other pipe over", async () => {
    const deliveries: RawChildExit[] = [];
    let taken: { fd: number; bytes: Buffer } | null = null;
    const exit = await new Promise<RawChildExit>((resolve) => {
      spawn({
        file: "/bin/sh",
        // stderr ends with the child; stdout overflows after the reap.
        argv: ["sh", "-c", `exec 2>&-; ${lateOverflow}`],
        stdio: [-1, -2, -2],
        capture: [1, 2],
        captureLimit: 100,
        onOverflow(this: RawChildHandle, slot) {
          expect(slot).toBe(1);
          taken = this.takeOver!(2);
          expect(deliveries).toHaveLength(0);
        },
        onExit(e) {
          deliveries.push(e as RawChildExit);
          resolve(e as RawChildExit);
        },
      });
    });
    // Read to its end by then, or handed over open (then ours to close).
    expect(taken).toMatchObject({ bytes: Buffer.alloc(0) });
    if (taken!.fd >= 0) expect(binding!.closeFd!(taken!.fd)).toBe(0);
    expect(exit.output).toEqual([null, Buffer.alloc(100), null]);
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect(deliveries).toHaveLength(1);
  });

  it("does not count exactly captureLimit bytes as an overflow", async () => {
    const { exit, overflows } = await sh("printf 12345", {
      stdio: [-1, -2, -1],
      capture: [1],
      captureLimit: 5,
    });
    expect(overflows).toEqual([]);
    expect(exit.output?.[1]?.toString()).toBe("12345");
  });

  /** A private dir; the child creates `written` and then waits until `go()`. */
  const gate = () => {
    const dir = mkdtempSync(join(tmpdir(), "exactspawn-gate-"));
    const go = join(dir, "go");
    return {
      written: join(dir, "written"),
      waitGo: `until [ -e '${go}' ]; do sleep 0.01; done`,
      go: () => writeFileSync(go, ""),
      remove: () => rmSync(dir, { recursive: true, force: true }),
    };
  };
  const MIB = 1024 * 1024;

  it("takeOver() hands over the fd and the bytes read so far, once", async () => {
    const before = await settledFds();
    // A MiB fits through a 64 KiB pipe only as the addon reads it, so once
    // `written` exists the addon holds most of it: takeOver has bytes to hand.
    const g = gate();
    try {
      const { handle, exited } = start(
        `head -c ${MIB} /dev/zero; : > '${g.written}'; ${g.waitGo}; echo late`,
        { stdio: [-1, -2, -2], capture: [1, 2], captureLimit: 2 * MIB },
      );
      expect(await eventually(() => existsSync(g.written))).toBe(true);
      const taken = handle.takeOver!(1)!;
      expect(taken.fd).toBeGreaterThan(2);
      expect(taken.bytes.length).toBeGreaterThan(0);
      expect(handle.takeOver!(1)).toBeNull();
      expect(handle.takeOver!(0)).toBeNull();
      const socket = new Socket({ fd: taken.fd, readable: true, writable: false });
      const rest: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => rest.push(chunk));
      const closed = new Promise((resolve) => socket.once("close", resolve));
      g.go();
      const exit = await exited;
      expect(exit.output).toEqual([null, null, Buffer.alloc(0)]);
      await closed;
      const all = Buffer.concat([taken.bytes, ...rest]);
      expect(all.equals(Buffer.concat([Buffer.alloc(MIB), Buffer.from("late\n")]))).toBe(true);
      expect(handle.takeOver!(2)).toBeNull();
      expect(await settledFds()).toEqual(before);
    } finally {
      g.remove();
    }
  });

  it("takeOver() of a pipe that has ended returns fd -1 and may deliver the exit at once", async () => {
    // The child closes stdout and waits: once the addon has seen the end of
    // that pipe it closes its read end, which this test watches for.
    const g = gate();
    try {
      const pipes = () =>
        openFds().filter((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`).startsWith("pipe:");
          } catch {
            return false;
          }
        });
      const pipesBefore = pipes();
      const { handle, exited } = start(`exec >&-; echo err >&2; ${g.waitGo}`, {
        stdio: [-1, -2, -2],
        capture: [1, 2],
        captureLimit: 100,
      });
      const ours = pipes().filter((fd) => !pipesBefore.includes(fd));
      expect(ours).toHaveLength(2);
      expect(await eventually(() => pipes().filter((fd) => ours.includes(fd)).length === 1)).toBe(
        true,
      );
      expect(handle.takeOver!(1)).toEqual({ fd: -1, bytes: Buffer.alloc(0) });
      g.go();
      const exit = await exited;
      expect(exit.output).toEqual([null, null, Buffer.from("err\n")]);
      expect(handle.takeOver!(2)).toBeNull();
    } finally {
      g.remove();
    }
  });
});
