/**
 * What a contained step's settings write where (src/spawn/contain.ts,
 * src/spawn/contain-plan.ts), with a fake binding and a scratch directory
 * standing in for the cgroup2 mount: this machine's cgroup2 has no
 * controllers delegated, so the limits themselves are checked by the kernel
 * tier. Here: cpu.max never gets a quota below the kernel's 1 ms floor (a
 * smaller one is refused with EINVAL and the step would not start), and a
 * cgroupParent is inside the mount only below its path and a `/`, not
 * beside it with the same prefix.
 *
 * Seen red with the floor removed (row cgroup-cpu-max-floor) and with the
 * mount's prefix tested without its `/` (row cgroup-parent-prefix).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { NativeBinding } from "../../src/native.js";
import { normalizeContain } from "../../src/spawn/contain.js";
import { cgroupSupport, forgetCgroupSupport } from "../../src/spawn/contain-plan.js";

const scratch = mkdtempSync(join(tmpdir(), "exactspawn-contain-settings-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
afterEach(() => forgetCgroupSupport());

describe("cpu.max", () => {
  it.each([
    [0.5, "50000 100000"],
    [2, "200000 100000"],
    [0.01, "1000 100000"],
    [0.001, "1000 100000"],
    [1e-9, "1000 100000"],
  ])("cpuMax %d writes %s (never under the kernel's 1 ms floor)", (cpuMax, written) => {
    expect(normalizeContain("spawn", { cpuMax })?.limits).toEqual([["cpu", "cpu.max", written]]);
  });
});

describe("a cgroupParent inside the cgroup2 mount", () => {
  const mount = join(scratch, "cgroup");
  const sibling = join(scratch, "cgroup-other");
  const inside = join(mount, "inside");
  for (const dir of [mount, sibling, inside]) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "cgroup.subtree_control"), "");
  }
  const binding = {
    probeContainment: () => ({ mount, own: inside }),
  } as unknown as NativeBinding;

  it("is the mount itself or below it", () => {
    expect(cgroupSupport(mount, binding)).toMatchObject({ available: true, parent: mount });
    expect(cgroupSupport(inside, binding)).toMatchObject({ available: true, parent: inside });
  });

  it("is not a directory beside it whose name starts with the mount's", () => {
    expect(cgroupSupport(sibling, binding)).toMatchObject({
      available: false,
      missing: ["cgroup2"],
      reason: expect.stringContaining("is not inside the cgroup2 mount"),
    });
  });
});
