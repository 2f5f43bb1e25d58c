/**
 * The addon's own contract: it type-checks its one options object (TypeError,
 * never a coercion), reports exec failures as Node-style errors, and its
 * handles behave after the child is gone.
 */
import { describe, expect, it } from "vitest";
import { nativeBinding, type RawChildExit, type RawSpawnOptions } from "../../src/native.js";

const binding = nativeBinding();

describe.runIf(binding?.spawn !== undefined)("native spawn binding", () => {
  const spawn = (o: Partial<RawSpawnOptions>) =>
    binding!.spawn!({
      file: "/bin/true",
      argv: ["true"],
      envp: [],
      stdio: [-1, -1, -1],
      onExit: () => {},
      ...o,
    } as RawSpawnOptions);

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
  ])("throws TypeError for %s", (_what, options) => {
    expect(() =>
      options === undefined
        ? (binding!.spawn as unknown as () => void)()
        : spawn(options as Partial<RawSpawnOptions>),
    ).toThrow(TypeError);
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

  it("delivers the exit once, with the handle as this, then refuses signals", async () => {
    const exit = await new Promise<{ exit: RawChildExit; self: unknown; handle: unknown }>(
      (resolve) => {
        const handle = spawn({
          onExit(this: unknown, e) {
            resolve({ exit: e as RawChildExit, self: this, handle });
          },
        });
        expect(handle.hasRef()).toBe(true);
        handle.unref();
        expect(handle.hasRef()).toBe(false);
        handle.ref();
      },
    );
    expect(exit.exit).toMatchObject({ exitCode: 0, signal: null });
    expect(exit.self).toBe(exit.handle);
    const handle = exit.handle as { kill(s: number): number; hasRef(): boolean };
    expect(handle.kill(15)).toBe(-3);
    expect(handle.hasRef()).toBe(false);
  });

  it("pipe() returns two close-on-exec fds and closeFd closes them", () => {
    const [r, w] = binding!.pipe!();
    expect(r).toBeGreaterThan(2);
    expect(binding!.closeFd!(r)).toBe(0);
    expect(binding!.closeFd!(w)).toBe(0);
    expect(binding!.closeFd!(w)).toBe(-9);
  });
});
