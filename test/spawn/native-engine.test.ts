/**
 * The native engine's stdio plumbing, driven with a fake binding: which fd
 * each slot hands to the addon, which ends the parent closes, and what
 * happens when the spawn throws.
 */
import { describe, expect, it } from "vitest";
import type { NativeBinding, RawChildHandle, RawSpawnOptions } from "../../src/native.js";
import type { EngineRequest } from "../../src/spawn/engine.js";
import { canSpawnNatively, nativeEngine } from "../../src/spawn/native-engine.js";

function fakeBinding(fail?: Error) {
  const closed: number[] = [];
  const calls: RawSpawnOptions[] = [];
  let nextFd = 100;
  const binding = {
    sourceStamp: "fake",
    napiVersion: 8,
    probe: () => {
      throw new Error("unused");
    },
    pipe: (): [number, number] => [nextFd++, nextFd++],
    closeFd: (fd: number) => {
      closed.push(fd);
      return 0;
    },
    spawn: (options: RawSpawnOptions): RawChildHandle => {
      calls.push(options);
      if (fail) throw fail;
      return {
        pid: 4242,
        kill: () => 0,
        killGroup: () => 0,
        ref: () => {},
        unref: () => {},
        hasRef: () => true,
      };
    },
  } satisfies NativeBinding;
  return { binding, closed, calls };
}

const request = (stdio: EngineRequest["stdio"]): EngineRequest => ({
  file: "/bin/true",
  argv: ["true"],
  envp: [],
  entries: [],
  cwd: undefined,
  stdio,
  setsid: false,
  setpgroup: false,
});

describe("nativeEngine", () => {
  it("needs spawn, pipe and closeFd", () => {
    expect(canSpawnNatively(null)).toBe(false);
    expect(canSpawnNatively(fakeBinding().binding)).toBe(true);
    const { closeFd: _omit, ...partial } = fakeBinding().binding;
    expect(canSpawnNatively(partial as NativeBinding)).toBe(false);
  });

  it("maps each slot to the fd the child gets and closes the child ends", () => {
    const { binding, closed, calls } = fakeBinding();
    // Only "ignore"/"inherit"/fd slots here: a "pipe" would wrap fake fds in sockets.
    nativeEngine(binding).start(request(["ignore", "inherit", 7, "inherit"]), () => {});
    expect(calls[0]?.stdio).toEqual([-1, 1, 7, 3]);
    expect(closed).toEqual([]);
  });

  it("closes both ends of every pipe when the spawn throws", () => {
    const failure = Object.assign(new Error("posix_spawn ENOENT /x"), { code: "ENOENT" });
    const { binding, closed, calls } = fakeBinding(failure);
    expect(() =>
      nativeEngine(binding).start(request(["pipe", "pipe", "ignore"]), () => {}),
    ).toThrow(failure);
    // stdin: child gets the read end (100); stdout: child gets the write end (103).
    expect(calls[0]?.stdio).toEqual([100, 103, -1]);
    expect([...closed].sort()).toEqual([100, 101, 102, 103]);
  });

  it("hands exits through, and turns a throwing listener into an uncaught exception", async () => {
    const { binding, calls } = fakeBinding();
    const exits: unknown[] = [];
    nativeEngine(binding).start(request(["ignore", "ignore", "ignore"]), (exit) => {
      exits.push(exit);
      throw new Error("listener bug");
    });
    const uncaught = new Promise<unknown>((resolve) => process.once("uncaughtException", resolve));
    const onExit = calls[0]!.onExit as (exit: unknown) => void;
    onExit({ exitCode: 0, signal: null, userCpuMicros: 1, systemCpuMicros: 2 });
    expect(exits).toEqual([
      {
        exitCode: 0,
        signal: null,
        resourceUsage: { userCpuMicros: 1, systemCpuMicros: 2 },
      },
    ]);
    expect(((await uncaught) as Error).message).toBe("listener bug");
  });
});
