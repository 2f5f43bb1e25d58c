/**
 * One clone3 refusal does not disable clone3: an EINVAL of a call that asked
 * CLONE_PIDFD may refuse that flag alone (a seccomp profile, an emulator), so
 * the addon asks again without it; where that starts the child, clone3 stays
 * in use and later contained steps are still created in their cgroup (no
 * cgroup move of their own). The refusal is injected (debugRefuseClone3Pidfd:
 * a seccomp filter cannot see clone3's flags, which are in memory), in a host
 * process of its own: what the addon learns is process-wide.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { nativeBinding, nativeStatus, PACKAGE_ROOT } from "../../src/native.js";
import { cgroupSupport } from "../../src/spawn/contain-plan.js";

const HOST = `
import { spawn } from "./dist/index.js";
import { nativeBinding } from "./dist/native.js";
const binding = nativeBinding();
const made = () => binding.debugCounters().clone3Children;
const cgroupOf = async () =>
  (await spawn("/bin/sh", ["-c", "grep ^0:: /proc/self/cgroup"], { contain: true })).stdout.trim();
const before = made();
binding.debugRefuseClone3Pidfd(1);
const first = await cgroupOf();
const second = await cgroupOf();
const third = await cgroupOf();
const killed = spawn("/bin/sleep", ["30"], { contain: true, reject: false });
killed.kill("SIGTERM");
console.log(JSON.stringify({
  byClone3: made() - before,
  cgroups: [first, second, third].map((line) => /exactspawn-\\d+-[0-9a-f]{16}\\/s\\d+$/.test(line)),
  signal: (await killed).signal,
}));`;

describe.runIf(
  nativeStatus().loaded &&
    cgroupSupport().available &&
    process.arch === "x64" &&
    typeof nativeBinding()?.debugRefuseClone3Pidfd === "function",
)("a clone3 that refuses CLONE_PIDFD once", () => {
  it("keeps clone3 for later contained steps, their exit watch opening the pidfd itself", () => {
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", HOST], {
      cwd: PACKAGE_ROOT,
      encoding: "utf8",
      env: { ...process.env, EXACTSPAWN_NATIVE: "required", EXACTSPAWN_LOG_LEVEL: "" },
    });
    expect(run.stderr).toBe("");
    // Four contained children, each created in its cgroup by clone3 (the first
    // by the call made again without the flag); the kill still reaches them.
    expect(JSON.parse(run.stdout)).toEqual({
      byClone3: 4,
      cgroups: [true, true, true],
      signal: "SIGTERM",
    });
  });
});
