/**
 * The kernel probe at load: where pidfd_open (Linux 5.3) or close_range (5.9)
 * is missing (an old kernel) or refused (a container's seccomp profile), the
 * library finds out when it loads the addon and takes its fallback, saying
 * why, instead of failing spawns one by one. The host process runs under a
 * seccomp filter that fails the call as such a kernel does.
 */
import { spawnSync } from "node:child_process";
import { constants } from "node:os";
import { describe, expect, it } from "vitest";
import { nativeBinding, nativeStatus, PACKAGE_ROOT } from "../../src/native.js";
import { cgroupSupport } from "../../src/spawn/contain-plan.js";
import { fixtureBinary } from "../fixtures/build.js";

// Both calls came after the syscall tables were unified: one number on every architecture.
const NR = { pidfd_open: 434, close_range: 436 };

const HOST = `
import { nativeStatus, spawn } from "./dist/index.js";
const run = await spawn("/bin/echo", ["still spawns"]);
console.log(JSON.stringify({ status: nativeStatus(), out: run.stdout.trim() }));`;

/**
 * Runs `script` in a Node host under a filter that fails each rule's call
 * ("NR" or "NR&MASK": only with one of MASK's bits in its first argument).
 */
function hostWithout(
  rules: [number | string, number][],
  env: NodeJS.ProcessEnv = {},
  script = HOST,
) {
  return spawnSync(
    fixtureBinary("without-syscall"),
    [...rules.flat().map(String), "--", process.execPath, "--input-type=module", "-e", script],
    {
      cwd: PACKAGE_ROOT,
      encoding: "utf8",
      env: { ...process.env, EXACTSPAWN_NATIVE: "", EXACTSPAWN_LOG_LEVEL: "", ...env },
    },
  );
}

describe.runIf(nativeStatus().loaded && nativeBinding()?.kernelSupport)("the kernel probe", () => {
  it("finds both calls on this kernel", () => {
    expect(nativeBinding()?.kernelSupport?.()).toEqual({ pidfdOpen: null, closeRange: null });
  });

  it.each([
    [
      "pidfd_open",
      NR.pidfd_open,
      constants.errno.ENOSYS,
      "pidfd_open (Linux 5.3) fails with ENOSYS",
    ],
    [
      "close_range",
      NR.close_range,
      constants.errno.ENOSYS,
      "close_range (Linux 5.9) fails with ENOSYS",
    ],
    ["pidfd_open", NR.pidfd_open, constants.errno.EPERM, "pidfd_open (Linux 5.3) fails with EPERM"],
  ])(
    "without %s (system call %i) the fallback is taken at load, with the reason",
    (_, nr, errno, why) => {
      const run = hostWithout([[nr, errno]]);
      expect(run.status).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report.out).toBe("still spawns");
      expect(report.status.loaded).toBe(false);
      expect(report.status.reason).toContain(`the kernel cannot run the addon: ${why}`);
      const warnings = run.stderr
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(warnings).toEqual([
        expect.objectContaining({ level: 50, cause: expect.stringContaining(why) }),
      ]);
    },
  );

  it("EXACTSPAWN_NATIVE=required refuses to run on such a kernel", () => {
    const run = hostWithout([[NR.pidfd_open, constants.errno.ENOSYS]], {
      EXACTSPAWN_NATIVE: "required",
    });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain("pidfd_open (Linux 5.3) fails with ENOSYS");
  });
});

// clone's number differs between the two architectures; CLONE_PIDFD (Linux 5.2) does not.
const CLONE_NR: Record<string, number> = { x64: 56, arm64: 220 };
const CLONE_PIDFD = 0x1000;

const EVERY_PATH = `
import { nativeStatus, spawn, spawnSync } from "./dist/index.js";
const exit = await spawn("/bin/sh", ["-c", "exit 7"], { reject: false });
const killed = spawn("/bin/sleep", ["30"], { reject: false });
killed.kill("SIGTERM");
const signal = (await killed).signal;
const sync = spawnSync("/bin/echo", ["sync"]).stdout.trim();
const helper = await spawn("/bin/sh", ["-c", "id -u"], { uid: process.getuid() });
console.log(JSON.stringify({
  loaded: nativeStatus().loaded,
  exitCode: exit.exitCode,
  signal,
  sync,
  helper: helper.stdout.trim(),
}));`;

const CONTAINED = `
import { spawn } from "./dist/index.js";
const run = await spawn("/bin/sh", ["-c", "grep ^0:: /proc/self/cgroup; exit 5"], {
  contain: true,
  reject: false,
});
console.log(JSON.stringify({ exitCode: run.exitCode, cgroup: run.stdout.trim() }));`;

describe.runIf(nativeStatus().loaded && cgroupSupport().available)(
  "a contained step where clone3 is refused (a kernel before 5.3, a container's seccomp profile)",
  () => {
    // (E2BIG, a kernel before 5.7, cannot be played here: the filter cannot
    // tell our clone3 from the C library's, whose threads fall back on ENOSYS only.)
    it("the child enters its cgroup itself, before its exec", () => {
      const run = hostWithout([[435, constants.errno.ENOSYS]], {}, CONTAINED);
      expect(run.stderr).toBe("");
      const report = JSON.parse(run.stdout);
      expect(report.exitCode).toBe(5);
      expect(report.cgroup).toMatch(/^0::\/.*exactspawn-\d+-[0-9a-f]{16}\/s\d+$/);
    });
  },
);

describe.runIf(nativeStatus().loaded && CLONE_NR[process.arch] !== undefined)(
  "a clone that refuses CLONE_PIDFD (qemu-user 7.2, a seccomp profile)",
  () => {
    it("still starts every child on the addon, the exit watch opening the pidfd itself", () => {
      const rule = `${CLONE_NR[process.arch]}&${CLONE_PIDFD}`;
      const run = hostWithout([[rule, constants.errno.EINVAL]], {}, EVERY_PATH);
      expect(run.stderr).toBe("");
      expect(JSON.parse(run.stdout)).toEqual({
        loaded: true,
        exitCode: 7,
        signal: "SIGTERM",
        sync: "sync",
        helper: String(process.getuid?.()),
      });
    });
  },
);
