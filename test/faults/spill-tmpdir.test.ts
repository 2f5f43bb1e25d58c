/**
 * A bash step whose values must spill, with a TMPDIR that cannot take them:
 * a path under a regular file (ENOTDIR), a missing directory (ENOENT), and,
 * where this process may mount (root here), a read-only tmpfs (EROFS: root
 * bypasses mode bits, so chmod 555 proves nothing) and a full 64 KiB tmpfs
 * (ENOSPC). Each ends in a SpillError naming the variable and the I/O code,
 * never the value; nothing starts, and no fd or directory is left behind.
 * TMPDIR matters only to the file kinds of spill descriptors, so the host
 * runs without the addon (EXACTSPAWN_NATIVE=0); with it, the memfd needs
 * no TMPDIR at all (the last case).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, rmdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PER_VALUE_ENV_CAP } from "../../src/limits.js";
import { removeDir, runHost, scratchDir } from "./host.js";

let dir: string;
beforeAll(() => {
  dir = scratchDir("exactspawn-spillfault-");
});
afterAll(() => removeDir(dir));

interface SpillReport {
  name: string | undefined;
  code: string | undefined;
  ioCode: string | undefined;
  variable: string | undefined;
  messageHasValue: boolean;
  before: number;
  after: number;
  zombies: number;
  ok: string;
}

// One over-cap value must spill; the step must fail before anything starts.
function spillInto(
  tmpdir: string,
  env: NodeJS.ProcessEnv = { EXACTSPAWN_NATIVE: "0" },
): SpillReport {
  const run = runHost<SpillReport>(
    dir,
    `
    const { createRuntime } = await import(DIST);
    const runtime = createRuntime({ parentEnv: { PATH: process.env.PATH } });
    const big = "V".repeat(${PER_VALUE_ENV_CAP + 10}) + "SECRET";
    await runtime.bash("true", {});
    const before = fds();
    let failure;
    try {
      await runtime.bash("echo started", { values: { big }, tmpdir: ${JSON.stringify(tmpdir)} });
    } catch (error) {
      failure = error;
    }
    const ok = (await runtime.bash("echo fine", { values: { small: "x" } })).output;
    await settle(() => fds() <= before && zombies() === 0);
    report({
      name: failure?.name,
      code: failure?.code,
      ioCode: failure?.ioCode,
      variable: failure?.variable,
      messageHasValue: String(failure?.message).includes("SECRET") || String(failure?.stack).includes("VVVV"),
      before,
      after: fds(),
      zombies: zombies(),
      ok,
    });
  `,
    { env },
  );
  expect(run.signal).toBeNull();
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" });
  return run.report!;
}

function expectSpillError(report: SpillReport, ioCode: string): void {
  console.log(`spill fault ${ioCode}: ${JSON.stringify(report)}`);
  expect(report).toMatchObject({
    name: "SpillError",
    code: "ERR_EXACTSPAWN_SPILL_WRITE",
    ioCode,
    messageHasValue: false,
    zombies: 0,
    ok: "fine",
  });
  expect(report.variable).toMatch(/big/i);
  expect(report.after).toBeLessThanOrEqual(report.before);
}

describe("spill directory faults", () => {
  it("TMPDIR under a regular file: ENOTDIR", () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    expectSpillError(spillInto(join(file, "tmp")), "ENOTDIR");
  });

  it("TMPDIR that does not exist: ENOENT", () => {
    expectSpillError(spillInto(join(dir, "missing", "tmp")), "ENOENT");
  });

  it("with the addon, a memfd needs no TMPDIR: the step runs", () => {
    const report = spillInto(join(dir, "missing", "tmp"), { EXACTSPAWN_NATIVE: "required" });
    expect(report.name).toBeUndefined();
    expect(report).toMatchObject({ zombies: 0, ok: "fine" });
    expect(report.after).toBeLessThanOrEqual(report.before);
  });
});

const canMount = (() => {
  if (process.getuid?.() !== 0) return false;
  const probe = join(tmpdir(), `exactspawn-mount-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    const ok = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]).status === 0;
    if (ok) spawnSync("umount", [probe]);
    rmdirSync(probe);
    return ok;
  } catch {
    return false;
  }
})();

describe.runIf(canMount)("spill directory faults on a tmpfs (needs mount privileges)", () => {
  function withTmpfs(options: string, body: (mount: string) => void): void {
    const mount = join(dir, `tmpfs-${Math.random().toString(36).slice(2)}`);
    mkdirSync(mount);
    expect(spawnSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", mount]).status).toBe(0);
    try {
      body(mount);
    } finally {
      spawnSync("umount", [mount]);
      rmdirSync(mount);
    }
  }

  it("a full 64 KiB tmpfs: ENOSPC, and the half-written directory is removed", () => {
    withTmpfs("size=64k,mode=1777", (mount) => {
      expectSpillError(spillInto(mount), "ENOSPC");
      expect(readdirSync(mount)).toEqual([]);
    });
  });

  it("a read-only tmpfs: EROFS (root ignores chmod 555, not a read-only mount)", () => {
    withTmpfs("size=64k,ro", (mount) => {
      expectSpillError(spillInto(mount), "EROFS");
    });
  });
});
