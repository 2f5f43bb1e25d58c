/**
 * Where execveat(AT_EMPTY_PATH) cannot start the exec helper (Debian's
 * 5.10.223 kernel fails it with ENOENT for every file; qemu-user 7.2 has no
 * execveat, ENOSYS), the vfork child execs the same file by
 * /proc/self/fd/N, then by the helper's path: a uid step and a step in a PID
 * namespace still run. Where every way fails, the failure names the helper
 * (step "helper", execveat's errno, the helper's path), and so does the
 * containment refusal, not "this host cannot make a PID namespace". The
 * refusal is injected (debugRefuseHelperExec: the first n exec attempts of
 * each helper start fail), in a host process of its own: the PID-namespace
 * probe's answer is kept per process.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { nativeBinding, nativeStatus, PACKAGE_ROOT } from "../../src/native.js";

const NOBODY = 65_534;

const host = (errno: number, count: number) => `
import { spawn } from "./dist/index.js";
import { nativeBinding } from "./dist/native.js";
import { pidNamespaceSupport } from "./dist/spawn/contain-plan.js";
nativeBinding().debugRefuseHelperExec(${errno}, ${count});
const named = (error) => ({ code: error.code, syscall: error.syscall, step: error.step, path: error.path });
const run = async (command, args, options) => {
  try {
    return (await spawn(command, args, options)).stdout.trim();
  } catch (error) {
    return named(error);
  }
};
const support = pidNamespaceSupport();
console.log(JSON.stringify({
  pidns: { available: support.available, reason: support.reason, missing: support.missing },
  uid: await run("/usr/bin/id", ["-u"], { uid: ${NOBODY}, gid: ${NOBODY} }),
  init: await run("/bin/sh", ["-c", "echo $$"], { contain: { mechanism: "pid-namespace" } }),
}));`;

function inHost(errno: number, count: number): Record<string, unknown> {
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", host(errno, count)], {
    cwd: PACKAGE_ROOT,
    encoding: "utf8",
    env: { ...process.env, EXACTSPAWN_NATIVE: "required", EXACTSPAWN_LOG_LEVEL: "" },
  });
  expect(run.stderr).toBe("");
  return JSON.parse(run.stdout);
}

const ENOENT = 2;
const ENOSYS = 38;
const EACCES = 13;

describe.runIf(
  nativeStatus().loaded &&
    process.getuid?.() === 0 &&
    typeof nativeBinding()?.debugRefuseHelperExec === "function" &&
    nativeBinding()?.helperStatus?.().run === "file",
)("an exec helper that execveat cannot start", () => {
  const works = {
    pidns: { available: true, reason: null, missing: [] },
    uid: String(NOBODY),
    init: "2", // the helper is PID 1 (the init), the step the next
  };

  it("is exec'd by /proc/self/fd/N where execveat fails with ENOENT (Debian's 5.10)", () => {
    expect(inHost(ENOENT, 1)).toEqual(works);
  });

  it("is exec'd by /proc/self/fd/N where execveat is missing (ENOSYS: qemu-user)", () => {
    expect(inHost(ENOSYS, 1)).toEqual(works);
  });

  it("is exec'd by its path where /proc/self/fd/N fails too (no /proc)", () => {
    expect(inHost(ENOENT, 2)).toEqual(works);
  });

  it("is named, execveat's errno kept, where every way fails; so is the containment refusal", () => {
    const path = nativeBinding()?.helperStatus?.().path;
    const failed = { code: "ENOENT", syscall: "execveat", step: "helper", path };
    const out = inHost(ENOENT, 3);
    expect(out.uid).toEqual(failed);
    expect(out.pidns).toEqual({
      available: false,
      reason: `a PID namespace's init is the exec helper, which cannot run: execveat ENOENT ${path}`,
      missing: ["exec helper"],
    });
    expect(out.init).toMatchObject({ code: "ERR_EXACTSPAWN_CONTAINMENT_UNAVAILABLE" });
  });

  it("is not tried another way where execveat's errno is the file's (EACCES)", () => {
    expect(inHost(EACCES, 1).uid).toMatchObject({ code: "EACCES", syscall: "execveat" });
  });
});
