/**
 * The read-only mount view covers every mount, not only the root one (root
 * host): in a sandboxed child's own /proc/self/mountinfo each mount outside
 * `writable` is read-only — /proc, /sys, /dev, the cgroup mounts, /dev/shm —
 * and a root-owned file on another file system (a tmpfs, /dev/shm) keeps its
 * mode when the child chmods it. The view is made with one recursive
 * mount_setattr; without AT_RECURSIVE only "/" turned read-only, and a
 * sandboxed root child chmod'ed a root-owned file in /dev/shm (issue 27,
 * item 9; every other test path is on the root mount).
 *
 * Seen red with `npm run test:mutants -- --only view-recursive`.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nativeStatus, sandboxSupport, spawn } from "../../src/index.js";

const root = process.getuid?.() === 0;
const view =
  root && nativeStatus().loaded && sandboxSupport().readOnlyView && existsSync("/dev/shm");

const base = view ? mkdtempSync(join(tmpdir(), "exactspawn-view-mounts-")) : "/nonexistent";
// A root-owned file on a file system of its own (not the root mount).
const shmDir = view ? mkdtempSync("/dev/shm/exactspawn-view-") : "/nonexistent";
afterAll(() => {
  if (!view) return;
  rmSync(base, { recursive: true, force: true });
  rmSync(shmDir, { recursive: true, force: true });
});

interface Mount {
  readonly point: string;
  readonly options: readonly string[];
}

/** mountinfo(5): field 5 is the mount point (octal escapes), field 6 the per-mount options. */
function mounts(text: string): Mount[] {
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const fields = line.split(" ");
      const point = (fields[4] ?? "").replace(/\\([0-7]{3})/g, (_, octal: string) =>
        String.fromCharCode(Number.parseInt(octal, 8)),
      );
      return { point, options: (fields[5] ?? "").split(",") };
    });
}

async function sh(script: string, readOnlyView = true) {
  const result = await spawn("/bin/sh", ["-c", script], {
    env: { PATH: "/usr/bin:/bin" },
    sandbox: { writable: [base], readOnlyView },
    reject: false,
  });
  return { code: result.exitCode, out: String(result.stdout), err: String(result.stderr) };
}

describe.runIf(view)("sandbox: the read-only view covers every mount", () => {
  it("every mount outside writable is read-only in the child's own mount table", async () => {
    const seen = await sh("cat /proc/self/mountinfo");
    expect(seen.code).toBe(0);
    const table = mounts(seen.out);
    const points = table.map((m) => m.point);
    // The oracle: the table names the mounts this test is about.
    expect(points).toEqual(expect.arrayContaining(["/", "/proc", "/dev/shm", base]));
    const writable = table.filter((m) => m.point === base || m.point.startsWith(`${base}/`));
    expect(writable.every((m) => m.options.includes("rw"))).toBe(true);
    const left = table
      .filter((m) => !writable.includes(m) && !m.options.includes("ro"))
      .map((m) => `${m.point} ${m.options.join(",")}`);
    expect(left).toEqual([]);
  });

  it("a root child cannot chmod a root-owned file on another mount (/dev/shm)", async () => {
    const target = join(shmDir, "root-owned");
    writeFileSync(target, "intact");
    chmodSync(target, 0o600);
    const refused = await sh(`chmod 0777 ${target}; echo x > ${target}`);
    expect(refused.err.match(/Read-only file system/g)).toHaveLength(2);
    expect(statSync(target).mode & 0o7777).toBe(0o600);
    // The oracle: without the view the same child changes it (Landlock has no right for chmod).
    expect((await sh(`chmod 0777 ${target}`, false)).code).toBe(0);
    expect(statSync(target).mode & 0o7777).toBe(0o777);
  });
});
