/**
 * The addon takes the controllers a step's cgroup may use from TypeScript
 * (CONTROLLERS in src/spawn/contain.ts, derived from LIMIT_FILES: one list,
 * not one in each language) and refuses a cgroup plan without that list, or
 * with an entry that is not one word of cgroup.subtree_control, with a
 * TypeError naming the field, before any cgroup is made or child starts.
 * Which controllers the sub-tree then enables only a kernel with delegated
 * controllers shows: the kernel tier's `first-peak` check (a memory peak
 * from the first plain step) and its `controllers-*` mutants.
 */
import { describe, expect, it } from "vitest";
import { type NativeBinding, nativeBinding, nativeStatus } from "../../src/native.js";
import { CONTROLLERS, LIMIT_FILES } from "../../src/spawn/contain.js";
import { deadlinePlan, nativeDeadline } from "../../src/spawn/deadline-plan.js";
import { zombieChildren } from "../fixtures/process-state.js";

describe("the controllers of a step's cgroup", () => {
  it("are the controllers of the limits, each once", () => {
    expect(CONTROLLERS).toEqual(["memory", "pids", "cpu"]);
    for (const { controller } of Object.values(LIMIT_FILES)) {
      expect(CONTROLLERS).toContain(controller);
    }
    expect(Object.isFrozen(CONTROLLERS)).toBe(true);
  });
});

describe.runIf(nativeStatus().loaded)("the addon's cgroup plan", () => {
  const run = (contain: unknown) =>
    (nativeBinding() as Required<NativeBinding>).spawnSync({
      file: "/bin/true",
      argv: ["true"],
      envp: [],
      stdio: [-1, -1, -1],
      deadline: nativeDeadline(
        deadlinePlan({ timeout: 0, killSignal: 15, killGraceMs: 0, maxBuffer: 0, ownGroup: false }),
      ),
      contain: contain as never,
    });

  it.each([
    ["no controllers list", { parent: "/nonexistent" }, /contain\.controllers must be an array/],
    [
      "a list that is not an array",
      { parent: "/nonexistent", controllers: "memory" },
      /contain\.controllers must be an array/,
    ],
    [
      "a path",
      { parent: "/nonexistent", controllers: ["memory", "../pids"] },
      /contain\.controllers\[1\] must name a controller/,
    ],
    [
      "an enable sign",
      { parent: "/nonexistent", controllers: ["+memory"] },
      /contain\.controllers\[0\] must name a controller/,
    ],
    [
      "two words",
      { parent: "/nonexistent", controllers: ["memory pids"] },
      /contain\.controllers\[0\] must name a controller/,
    ],
    ["an empty name", { parent: "/nonexistent", controllers: [""] }, /contain\.controllers\[0\]/],
    ["a number", { parent: "/nonexistent", controllers: [1] }, /contain\.controllers\[0\]/],
    [
      "too many",
      { parent: "/nonexistent", controllers: Array.from({ length: 9 }, () => "pids") },
      /contain\.controllers is too long/,
    ],
  ])("refuses %s", (_what, contain, message) => {
    expect(() => run(contain)).toThrow(TypeError);
    expect(() => run(contain)).toThrow(message);
    expect(zombieChildren()).toEqual([]);
  });
});
