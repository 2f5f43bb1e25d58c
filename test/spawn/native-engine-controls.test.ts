/**
 * Which start path the native engine asks the addon for, driven with a fake
 * binding: the child path (the posix_spawn flag clear) unless
 * EXACTSPAWN_CHILD_PATH=posix_spawn asks for posix_spawn (flag 4) for spawns
 * without exec controls; controls are passed in the
 * addon's shape ([name, soft, hard] limits, numeric signals). Seen red once with
 * one control left out of rawControls and with the env switch ignored.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { NativeBinding, RawChildHandle } from "../../src/native.js";
import type { EngineRequest } from "../../src/spawn/engine.js";
import { normalizeExecControls } from "../../src/spawn/exec-controls.js";
import { nativeEngine } from "../../src/spawn/native-engine.js";
import { fakeSpawn, type RecordedSpawn } from "../helpers/fake-spawn.js";

function fakeBinding() {
  const calls: RecordedSpawn[] = [];
  const binding = {
    sourceStamp: "fake",
    napiVersion: 8,
    probe: () => {
      throw new Error("unused");
    },
    spawn: fakeSpawn(calls, (): RawChildHandle => {
      return {
        pid: 4242,
        kill: () => 0,
        killGroup: () => 0,
        ref: () => {},
        unref: () => {},
        hasRef: () => true,
      };
    }),
  } satisfies NativeBinding;
  return { binding, calls };
}

const request = (controls: EngineRequest["controls"]): EngineRequest => ({
  file: "/bin/true",
  argv: ["true"],
  entries: [],
  cwd: undefined,
  stdio: ["ignore", "ignore", "ignore"],
  setsid: false,
  setpgroup: false,
  controls,
});

describe("nativeEngine: start path", () => {
  const saved = process.env["EXACTSPAWN_CHILD_PATH"];
  afterEach(() => {
    if (saved === undefined) delete process.env["EXACTSPAWN_CHILD_PATH"];
    else process.env["EXACTSPAWN_CHILD_PATH"] = saved;
  });

  it("takes the child path (no posix_spawn flag, no controls) when no control is set", () => {
    delete process.env["EXACTSPAWN_CHILD_PATH"];
    const { binding, calls } = fakeBinding();
    nativeEngine(binding).start(request(undefined), () => {});
    expect(calls[0]!.posixSpawn).toBe(false);
    expect(calls[0]!.controls).toBeUndefined();
  });

  it("passes every control in the addon's shape", () => {
    delete process.env["EXACTSPAWN_CHILD_PATH"];
    const { binding, calls } = fakeBinding();
    const controls = normalizeExecControls({
      uid: 1000,
      gid: 1001,
      groups: [3, 4],
      umask: 0o27,
      rlimits: { nofile: [64, 128], cpu: Infinity },
      nice: 5,
      noNewPrivileges: true,
      parentDeathSignal: "SIGTERM",
    });
    nativeEngine(binding).start(request(controls), () => {});
    expect(calls[0]!.controls).toEqual({
      uid: 1000,
      gid: 1001,
      groups: [3, 4],
      umask: 0o27,
      rlimits: [
        ["nofile", 64, 128],
        ["cpu", Infinity, Infinity],
      ],
      nice: 5,
      noNewPrivileges: true,
      parentDeathSignal: 15,
    });
  });

  it("EXACTSPAWN_CHILD_PATH=posix_spawn sends a spawn without controls through posix_spawn", () => {
    process.env["EXACTSPAWN_CHILD_PATH"] = "posix_spawn";
    const { binding, calls } = fakeBinding();
    nativeEngine(binding).start(request(undefined), () => {});
    expect(calls[0]!.posixSpawn).toBe(true);
    expect(calls[0]!.controls).toBeUndefined();
  });

  it("keeps the child path for a spawn with controls when posix_spawn is asked for", () => {
    process.env["EXACTSPAWN_CHILD_PATH"] = "posix_spawn";
    const { binding, calls } = fakeBinding();
    nativeEngine(binding).start(request(normalizeExecControls({ umask: 0o22 })), () => {});
    expect(calls[0]!.controls).toEqual({ umask: 0o22 });
  });
});
