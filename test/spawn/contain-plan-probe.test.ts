/**
 * The cgroup probe asks by doing (issue 36, item 4): whether a step cgroup
 * can be made under the parent is found out by making one there and removing
 * it, never by access(2) — cgroupfs directories are mode 0555, and a runtime
 * that answers access() from the mode bits rather than from the kernel (Deno
 * says EACCES to root) would lose the cgroup mechanism though mkdir works.
 * Here access() is made to answer EACCES, as Deno's does; the scratch
 * directory stands in for the cgroup2 mount. A probe that was made but could
 * not be removed still answers "available" (a step cgroup can be made) and
 * logs the path it left: rmdir of a probe fails on demand here, since a fresh
 * empty cgroup is always removable on a real cgroupfs.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { setLogger } from "../../src/log.js";
import type { NativeBinding } from "../../src/native.js";
import { cgroupSupport, forgetCgroupSupport } from "../../src/spawn/contain-plan.js";
import { captureLog } from "../helpers/capture-log.js";

const refuse = vi.hoisted(() => ({ rmdir: undefined as string | undefined }));

vi.mock("node:fs", async (original) => {
  const fs = await original<typeof import("node:fs")>();
  const refused = () => {
    throw Object.assign(new Error("EACCES: permission denied, access"), { code: "EACCES" });
  };
  const rmdirSync: typeof fs.rmdirSync = (path, options) => {
    if (refuse.rmdir !== undefined && String(path).includes("/exactspawn-probe-")) {
      throw Object.assign(new Error(`${refuse.rmdir}: rmdir`), { code: refuse.rmdir });
    }
    fs.rmdirSync(path, options);
  };
  const replaced = { accessSync: refused, rmdirSync };
  return { ...fs, ...replaced, default: { ...fs, ...replaced } };
});

const mount = mkdtempSync(join(tmpdir(), "exactspawn-contain-probe-"));
afterAll(() => rmSync(mount, { recursive: true, force: true }));
afterEach(() => {
  refuse.rmdir = undefined;
  forgetCgroupSupport();
  setLogger(undefined);
});

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

  it("a probe made but not removable: still available, and the path it left is logged", () => {
    const own = join(mount, "sticky");
    mkdirSync(own);
    writeFileSync(join(own, "cgroup.subtree_control"), "memory pids\n");
    const capture = captureLog();
    setLogger(capture.logger);
    refuse.rmdir = "EBUSY";
    expect(cgroupSupport(undefined, binding(own))).toEqual({
      parent: own,
      available: true,
      reason: null,
      missing: [],
      controllers: ["memory", "pids"],
    });
    const left = readdirSync(own).filter((name) => name.startsWith("exactspawn-probe-"));
    expect(left).toHaveLength(1);
    expect(capture.events()).toMatchObject([
      { level: 40, event: "contain.probe", path: join(own, left[0]!), code: "EBUSY" },
    ]);
  });
});
