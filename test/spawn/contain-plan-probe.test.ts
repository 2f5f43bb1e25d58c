/**
 * The cgroup probe asks by doing (issue 36, item 4): whether a step cgroup
 * can be made under the parent is found out by making one there and removing
 * it, never by access(2) — cgroupfs directories are mode 0555, and a runtime
 * that answers access() from the mode bits rather than from the kernel (Deno
 * says EACCES to root) would lose the cgroup mechanism though mkdir works.
 * Here access() is made to answer EACCES, as Deno's does; the scratch
 * directory stands in for the cgroup2 mount.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { NativeBinding } from "../../src/native.js";
import { cgroupSupport, forgetCgroupSupport } from "../../src/spawn/contain-plan.js";

vi.mock("node:fs", async (original) => {
  const fs = await original<typeof import("node:fs")>();
  const refused = () => {
    throw Object.assign(new Error("EACCES: permission denied, access"), { code: "EACCES" });
  };
  return { ...fs, default: { ...fs, accessSync: refused }, accessSync: refused };
});

const mount = mkdtempSync(join(tmpdir(), "exactspawn-contain-probe-"));
afterAll(() => rmSync(mount, { recursive: true, force: true }));
afterEach(() => forgetCgroupSupport());

const binding = (own: string) =>
  ({ probeContainment: () => ({ mount, own }) }) as unknown as NativeBinding;

describe("cgroupSupport probes by making a cgroup", () => {
  it("a parent where a cgroup can be made is available, whatever access() says; nothing is left", () => {
    const own = join(mount, "host");
    mkdirSync(own);
    writeFileSync(join(own, "cgroup.subtree_control"), "pids\n");
    expect(cgroupSupport(undefined, binding(own))).toEqual({
      parent: own,
      available: true,
      reason: null,
      missing: [],
      controllers: ["pids"],
    });
    expect(readdirSync(own)).toEqual(["cgroup.subtree_control"]);
  });

  it("a parent where mkdir fails is unavailable, with mkdir's code", () => {
    const own = join(mount, "gone");
    const support = cgroupSupport(undefined, binding(own));
    expect(support).toMatchObject({ available: false, missing: ["writable cgroup"] });
    expect(support.reason).toContain(`cannot create a cgroup under ${own} (ENOENT)`);
  });
});
