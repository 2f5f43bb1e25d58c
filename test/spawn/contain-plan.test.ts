/**
 * The containment policy (src/spawn/contain.ts, src/spawn/contain-plan.ts)
 * driven by a fake binding: option validation, what a step gets on each
 * kind of host, and the refusals (ContainmentError naming what is missing).
 * The parent "cgroup" is a scratch directory standing in for the cgroup2
 * mount, with the cgroup.subtree_control file each case needs.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { NativeBinding } from "../../src/native.js";
import { ContainmentError, normalizeContain } from "../../src/spawn/contain.js";
import {
  cgroupSupport,
  forgetCgroupSupport,
  pidNamespaceSupport,
  planContainment,
} from "../../src/spawn/contain-plan.js";

const mount = mkdtempSync(join(tmpdir(), "exactspawn-contain-plan-"));
afterAll(() => rmSync(mount, { recursive: true, force: true }));
afterEach(() => forgetCgroupSupport());

function host(
  controllers: string,
  probe?: ReturnType<NonNullable<NativeBinding["probeContainment"]>>,
) {
  const own = join(mount, `host-${Math.random().toString(36).slice(2)}`);
  mkdirSync(own);
  writeFileSync(join(own, "cgroup.subtree_control"), controllers);
  return {
    own,
    binding: { probeContainment: () => probe ?? { mount, own } } as unknown as NativeBinding,
  };
}

describe("normalizeContain", () => {
  it("maps the values and the limits onto the cgroup's files", () => {
    expect(normalizeContain("spawn", undefined)).toBeUndefined();
    expect(normalizeContain("spawn", false)).toBeUndefined();
    expect(normalizeContain("spawn", true)).toMatchObject({ required: true, limits: [] });
    expect(normalizeContain("spawn", "best-effort")).toMatchObject({ required: false });
    expect(
      normalizeContain("spawn", { memoryMax: 1 << 20, pidsMax: 8, cpuMax: 0.5 })?.limits,
    ).toEqual([
      ["memory", "memory.max", "1048576"],
      ["pids", "pids.max", "8"],
      ["cpu", "cpu.max", "50000 100000"],
    ]);
  });

  it.each([
    ["yes", /options.contain must be true, false/],
    [{ pidsMax: 0 }, /pidsMax must be an integer >= 1/],
    [{ memoryMax: 1.5 }, /memoryMax must be an integer/],
    [{ cpuMax: 0 }, /cpuMax must be a number of CPUs > 0/],
    [{ cgroupParent: "relative" }, /cgroupParent must be an absolute path/],
    [{ cgroupParent: "/a\nb" }, /without NUL or newline/],
    [{ memorymax: 1 }, /unknown option "memorymax"/],
    [{ mechanism: "namespace" }, /mechanism must be "cgroup" or "pid-namespace"/],
    [{ mechanism: "pid-namespace", pidsMax: 8 }, /need mechanism "cgroup"/],
    [{ mechanism: "pid-namespace", cgroupParent: "/sys/fs/cgroup" }, /need mechanism "cgroup"/],
  ])("refuses %j with a TypeError naming it", (value, message) => {
    expect(() => normalizeContain("spawn", value)).toThrow(TypeError);
    expect(() => normalizeContain("spawn", value)).toThrow(message);
  });
});

describe("planContainment", () => {
  it("contains under the host's own cgroup and reports it", () => {
    const { own, binding } = host("");
    const plan = planContainment(normalizeContain("spawn", true), true, binding);
    expect(plan.raw).toEqual({ parent: own, controllers: ["memory", "pids", "cpu"] });
    expect(plan.report).toEqual({
      mechanism: "cgroup",
      cgroupParent: own,
      limits: {},
      limitEvents: null,
    });
  });

  it("writes the limits whose controllers are delegated", () => {
    const { own, binding } = host("cpu memory pids\n");
    const plan = planContainment(normalizeContain("spawn", { pidsMax: 64 }), true, binding);
    expect(plan.raw).toEqual({
      parent: own,
      controllers: ["memory", "pids", "cpu"],
      limits: [["pids", "pids.max", "64"]],
    });
    expect(plan.report).toMatchObject({ mechanism: "cgroup", limits: { pidsMax: 64 } });
  });

  it("refuses a limit whose controller is not delegated, naming it (fails closed)", () => {
    const { binding } = host("cpu\n");
    let error: unknown;
    try {
      planContainment(normalizeContain("spawn", { memoryMax: 1 << 20 }), true, binding);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ContainmentError);
    expect(error).toMatchObject({
      code: "ERR_EXACTSPAWN_CONTAINMENT_CONTROLLER",
      missing: ["controller memory"],
    });
    expect((error as Error).message).toMatch(/cgroup.subtree_control lists cpu/);
  });

  it("refuses on the fallback engine, and best-effort runs uncontained there", () => {
    const { binding } = host("");
    expect(() => planContainment(normalizeContain("spawn", true), false, binding)).toThrow(
      expect.objectContaining({ missing: ["native engine"] }),
    );
    expect(planContainment(normalizeContain("spawn", "best-effort"), false, binding)).toEqual({
      raw: undefined,
      report: null,
    });
  });

  it("names cgroup2 as missing where the host has no cgroup v2 path", () => {
    const { binding } = host("", { errno: -2, code: "ENOENT" });
    expect(cgroupSupport(undefined, binding)).toMatchObject({
      available: false,
      missing: ["cgroup2"],
    });
    expect(() => planContainment(normalizeContain("spawn", true), true, binding)).toThrow(
      ContainmentError,
    );
  });

  it("refuses a cgroupParent outside the cgroup2 mount", () => {
    const { binding } = host("");
    expect(() =>
      planContainment(normalizeContain("spawn", { cgroupParent: "/etc" }), true, binding),
    ).toThrow(/not inside the cgroup2 mount/);
  });

  describe("the PID namespace", () => {
    type Probe = ReturnType<NonNullable<NativeBinding["probePidNamespace"]>>;
    const withPid = (binding: NativeBinding, probe: Probe) =>
      Object.assign(Object.create(binding) as NativeBinding, { probePidNamespace: () => probe });
    const noCgroup = () => host("", { errno: -2, code: "ENOENT" }).binding;
    const userns: Probe = { works: true, userNamespace: true };
    const refused: Probe = { works: false, userNamespace: true, errno: -1, code: "EPERM" };

    it("is the default where no cgroup can be made, and is reported", () => {
      const binding = withPid(noCgroup(), userns);
      const plan = planContainment(normalizeContain("spawn", true), true, binding);
      expect(plan.raw).toEqual({ namespace: "pid+user" });
      expect(plan.report).toEqual({
        mechanism: "pid-namespace",
        userNamespace: true,
        limitEvents: null,
      });
      expect(pidNamespaceSupport(binding)).toMatchObject({ available: true, userNamespace: true });
    });

    it("is taken when asked, even where a cgroup could be made", () => {
      const binding = withPid(host("").binding, { works: true, userNamespace: false });
      const plan = planContainment(
        normalizeContain("spawn", { mechanism: "pid-namespace" }),
        true,
        binding,
      );
      expect(plan.raw).toEqual({ namespace: "pid" });
      expect(plan.report).toEqual({
        mechanism: "pid-namespace",
        userNamespace: false,
        limitEvents: null,
      });
    });

    it("is no fallback for limits or an asked cgroup: those refuse", () => {
      const binding = withPid(noCgroup(), userns);
      for (const value of [{ pidsMax: 8 }, { mechanism: "cgroup" }]) {
        expect(() => planContainment(normalizeContain("spawn", value), true, binding)).toThrow(
          expect.objectContaining({ missing: ["cgroup2"] }),
        );
      }
    });

    it("where neither exists, refuses naming both remedies; best-effort runs uncontained", () => {
      const binding = withPid(noCgroup(), refused);
      let error: unknown;
      try {
        planContainment(normalizeContain("spawn", true), true, binding);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ContainmentError);
      expect(error).toMatchObject({
        code: "ERR_EXACTSPAWN_CONTAINMENT_UNAVAILABLE",
        missing: ["cgroup2", "user namespace"],
      });
      const message = (error as Error).message;
      expect(message).toMatch(/kernel\.unprivileged_userns_clone/);
      expect(message).toMatch(/user\.max_user_namespaces/);
      expect(message).toMatch(/cgroup2/);
      expect(planContainment(normalizeContain("spawn", "best-effort"), true, binding)).toEqual({
        raw: undefined,
        report: null,
      });
    });

    it("a forced namespace where none can be made names the user namespace", () => {
      const binding = withPid(host("").binding, refused);
      expect(() =>
        planContainment(normalizeContain("spawn", { mechanism: "pid-namespace" }), true, binding),
      ).toThrow(/unprivileged_userns_clone/);
    });
  });

  it("without the addon nothing can be contained", () => {
    expect(cgroupSupport(undefined, null)).toMatchObject({ missing: ["native engine"] });
  });
});
