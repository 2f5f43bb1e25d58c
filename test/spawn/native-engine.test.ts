/**
 * The native engine's stdio plumbing, driven with a fake binding: which fd
 * each slot hands to the addon, which slots it asks the addon to capture, and
 * how a captured slot is taken over.
 */
import { describe, expect, it } from "vitest";
import type { NativeBinding, RawChildHandle } from "../../src/native.js";
import type { EngineRequest } from "../../src/spawn/engine.js";
import { canSpawnNatively, nativeEngine } from "../../src/spawn/native-engine.js";
import { fakeSpawn, type RecordedSpawn } from "../helpers/fake-spawn.js";

function fakeBinding(fail?: Error, handleExtras: Partial<RawChildHandle> = {}) {
  const calls: RecordedSpawn[] = [];
  const binding = {
    sourceStamp: "fake",
    napiVersion: 8,
    probe: () => {
      throw new Error("unused");
    },
    spawn: fakeSpawn(calls, (): RawChildHandle => {
      if (fail) throw fail;
      return {
        pid: 4242,
        kill: () => 0,
        killGroup: () => 0,
        ref: () => {},
        unref: () => {},
        hasRef: () => true,
        ...handleExtras,
      };
    }),
  } satisfies NativeBinding;
  return { binding, calls };
}

const request = (stdio: EngineRequest["stdio"]): EngineRequest => ({
  file: "/bin/true",
  argv: ["true"],
  entries: [],
  cwd: undefined,
  stdio,
  setsid: false,
  setpgroup: false,
});

describe("nativeEngine", () => {
  it("needs spawn", () => {
    expect(canSpawnNatively(null)).toBe(false);
    expect(canSpawnNatively(fakeBinding().binding)).toBe(true);
    const { spawn: _omit, ...partial } = fakeBinding().binding;
    expect(canSpawnNatively(partial as NativeBinding)).toBe(false);
  });

  it("maps each slot to the fd the child gets (-2: the addon makes a pipe)", () => {
    const { binding, calls } = fakeBinding();
    const child = nativeEngine(binding).start(
      request(["ignore", "inherit", 7, "inherit", "pipe"]),
      () => {},
    );
    expect(calls[0]?.stdio).toEqual([-1, 1, 7, 3, -2]);
    expect(calls[0]?.capture).toBeUndefined();
    // No `fds` from the (fake) addon: no parent ends to wrap.
    expect(child.streams).toEqual([null, null, null, null, null]);
    expect(child.captured).toEqual([]);
  });

  it("passes a spawn failure through", () => {
    const failure = Object.assign(new Error("posix_spawn ENOENT /x"), { code: "ENOENT" });
    const { binding, calls } = fakeBinding(failure);
    expect(() =>
      nativeEngine(binding).start(request(["pipe", "pipe", "ignore"]), () => {}),
    ).toThrow(failure);
    expect(calls[0]?.stdio).toEqual([-2, -2, -1]);
  });

  it("asks the addon to capture, and reports overflows and take-overs", () => {
    const bytes = Buffer.from("early");
    const taken: number[] = [];
    const { binding, calls } = fakeBinding(undefined, {
      takeOver: (slot: number) => {
        taken.push(slot);
        return slot === 2 ? { fd: -1, bytes } : null;
      },
    });
    const overflows: number[] = [];
    const child = nativeEngine(binding).start(
      { ...request(["ignore", "pipe", "pipe"]), capture: { slots: [1, 2], maxBuffer: 10.5 } },
      () => {},
      (slot) => overflows.push(slot),
    );
    expect(calls[0]).toMatchObject({ stdio: [-1, -2, -2], capture: [1, 2], captureLimit: 10.5 });
    expect(child.captured).toEqual([1, 2]);
    calls[0]!.onOverflow!.call(undefined as unknown as RawChildHandle, 2);
    expect(overflows).toEqual([2]);
    // A pipe that already ended comes back without a stream.
    expect(child.takeOver(2)).toEqual({ stream: null, bytes });
    expect(child.takeOver(1)).toBeNull();
    expect(taken).toEqual([2, 1]);
  });

  it("hands exits through, and turns a throwing listener into an uncaught exception", async () => {
    const { binding, calls } = fakeBinding();
    const exits: unknown[] = [];
    nativeEngine(binding).start(request(["ignore", "ignore", "ignore"]), (exit) => {
      exits.push(exit);
      throw new Error("listener bug");
    });
    const uncaught = new Promise<unknown>((resolve) => process.once("uncaughtException", resolve));
    // The addon's positional exit: exitCode, signal, user and system CPU, max RSS.
    const onExit = calls[0]!.onExit as (...exit: unknown[]) => void;
    onExit(0, null, 1, 2, 3);
    expect(exits).toEqual([
      {
        exitCode: 0,
        signal: null,
        resourceUsage: { userCpuMicros: 1, systemCpuMicros: 2, maxRssKiB: 3 },
      },
    ]);
    expect(((await uncaught) as Error).message).toBe("listener bug");
  });
});
