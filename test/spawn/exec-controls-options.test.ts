/**
 * Validation of the exec-control options: a wrong type is a TypeError and a
 * value out of range a RangeError, both thrown synchronously by `spawn` and
 * naming the option; nothing is coerced, nothing starts. Seen red once with
 * the integer range check of exec-controls.ts removed (the seven integer
 * range cases failed), then restored.
 */
import { describe, expect, it } from "vitest";
import { type SpawnOptions, spawn } from "../../src/index.js";
import { normalizeExecControls } from "../../src/spawn/exec-controls.js";

function thrown(options: SpawnOptions): unknown {
  try {
    spawn("/bin/true", [], options);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("exec controls: validation", () => {
  const wrongTypes: [string, SpawnOptions][] = [
    ["uid", { uid: "0" as unknown as number }],
    ["gid", { gid: null as unknown as number }],
    ["groups", { groups: 5 as unknown as number[] }],
    ["groups[1]", { groups: [1, "2"] as unknown as number[] }],
    ["umask", { umask: "022" as unknown as number }],
    ["rlimits", { rlimits: [] as unknown as SpawnOptions["rlimits"] }],
    ["rlimits.nofile", { rlimits: { nofile: "10" as unknown as number } }],
    ["rlimits.nofile", { rlimits: { nofile: [1, 2, 3] as unknown as [number, number] } }],
    ["rlimits.files", { rlimits: { files: 10 } as SpawnOptions["rlimits"] }],
    ["nice", { nice: 1n as unknown as number }],
    ["noNewPrivileges", { noNewPrivileges: 1 as unknown as boolean }],
    ["parentDeathSignal", { parentDeathSignal: "SIGNOPE" }],
  ];
  for (const [name, options] of wrongTypes) {
    it(`throws a TypeError naming ${name}`, () => {
      const error = thrown(options);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toContain(name);
    });
  }

  const outOfRange: [string, SpawnOptions][] = [
    ["uid", { uid: -1 }],
    ["uid", { uid: 2 ** 32 - 1 }],
    ["gid", { gid: 1.5 }],
    ["groups[0]", { groups: [-3] }],
    ["umask", { umask: 0o10000 }],
    ["nice", { nice: 20 }],
    ["nice", { nice: -21 }],
    ["rlimits.cpu", { rlimits: { cpu: -1 } }],
    ["rlimits.cpu", { rlimits: { cpu: Number.NaN } }],
    ["rlimits.nofile", { rlimits: { nofile: [20, 10] } }],
    ["parentDeathSignal", { parentDeathSignal: 0 }],
  ];
  for (const [name, options] of outOfRange) {
    it(`throws a RangeError naming ${name} for ${JSON.stringify(options)}`, () => {
      const error = thrown(options);
      expect(error).toBeInstanceOf(RangeError);
      expect((error as Error).message).toContain(name);
    });
  }

  it("asks for nothing when no control is set, so the spawn keeps posix_spawn", () => {
    expect(normalizeExecControls({})).toBeUndefined();
  });

  it("normalises limits to [name, soft, hard] and signals to numbers", () => {
    const controls = normalizeExecControls({
      rlimits: { cpu: 5, nofile: [10, Infinity] },
      parentDeathSignal: "SIGKILL",
      umask: 0,
    });
    expect(controls).toMatchObject({
      rlimits: [
        ["cpu", 5, 5],
        ["nofile", 10, Infinity],
      ],
      parentDeathSignal: 9,
      umask: 0,
      noNewPrivileges: false,
    });
  });
});
