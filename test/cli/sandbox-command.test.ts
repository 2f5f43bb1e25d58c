/**
 * `exactspawn sandbox` run as a user would. What it reports is checked
 * against the kernel asked without the library: the Landlock ABI from a tiny
 * C program of our own (test/fixtures/landlock-abi.c, no code shared with the
 * addon) and seccomp from the `Seccomp:` line /proc/self/status has when the
 * kernel was built with it. The parts a default sandbox needs follow from
 * those two by the ABI table in docs/sandbox.md, written out again here.
 *
 * Seen red once: with --json reporting `landlockAbi: support.landlockAbi - 1`
 * both --json tests failed (7 against 6 here, 0 against -1 on the fallback).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { release } from "node:os";
import { describe, expect, it } from "vitest";
import { fixtureBinary } from "../fixtures/build.js";
import { cli } from "../helpers/run-cli.js";

/** Landlock's ABI version here, 0 without Landlock: asked of the kernel directly. */
const landlockAbi = Number(execFileSync(fixtureBinary("landlock-abi"), { encoding: "utf8" }));

/** The filter needs CONFIG_SECCOMP (the status line) and is built for x86-64 and arm64. */
const seccomp =
  /^Seccomp:/m.test(readFileSync("/proc/self/status", "utf8")) &&
  (process.arch === "x64" || process.arch === "arm64");

/**
 * The read-only mount view: root (CAP_SYS_ADMIN) on Linux 5.12 or later
 * (docs/sandbox.md). A host that is not root depends on its user-namespace
 * policy; only root is checked here.
 */
const [major = 0, minor = 0] = release().split(".").map(Number);
const isRoot = process.getuid?.() === 0;
// Root on a host with a cgroup2 mount can always make a cgroup under its own.
const cgroup2 = readFileSync("/proc/self/mountinfo", "utf8")
  .split("\n")
  .some((line) => line.includes(" - cgroup2 "));
const view = isRoot && (major > 5 || (major === 5 && minor >= 12));

/** What a default sandbox (no network) cannot get here: docs/sandbox.md's table. */
function expectedMissing(abi: number, filter: boolean): string[] {
  const missing: string[] = [];
  if (abi < 1) missing.push("filesystem");
  if (abi >= 1 && abi < 3) missing.push("truncate");
  if (abi >= 1 && abi < 5) missing.push("ioctl");
  if (!filter) missing.push("network", "syscalls");
  return missing;
}

describe("exactspawn sandbox", () => {
  it("--json reports what the kernel says, in the exactspawn.sandbox/v1 schema", () => {
    const run = cli(["sandbox", "--json"], { env: { EXACTSPAWN_NATIVE: "required" } });
    const missing = expectedMissing(landlockAbi, seccomp);
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({
      schema: "exactspawn.sandbox/v1",
      native: true,
      landlockAbi,
      landlockTcp: landlockAbi >= 4,
      landlockScopes: landlockAbi >= 6,
      seccompFilter: seccomp,
      readOnlyView: isRoot ? view : expect.any(Boolean),
      readOnlyViewUnavailable: view ? null : isRoot ? "kernel" : expect.anything(),
      readOnlyViewUserNamespace: isRoot ? false : expect.any(Boolean),
      missing,
      containment:
        isRoot && cgroup2
          ? expect.objectContaining({
              mechanism: "cgroup",
              reason: null,
              pidNamespace: { available: true, userNamespace: false, reason: null },
            })
          : expect.any(Object),
      helper: { run: "file", path: expect.stringMatching(/\/exactspawn-helper$/), reason: null },
    });
    expect(run.status).toBe(missing.length === 0 ? 0 : 1);
  });

  it("names the Landlock ABI in its table", () => {
    const run = cli(["sandbox"], { env: { EXACTSPAWN_NATIVE: "required" } });
    expect(run.stdout).toMatch(/^engine\s+native$/m);
    expect(run.stdout).toMatch(
      landlockAbi > 0
        ? new RegExp(`^Landlock\\s+ABI ${landlockAbi}$`, "m")
        : /^Landlock\s+unavailable$/m,
    );
    expect(run.stdout).toMatch(new RegExp(`^seccomp filter\\s+${seccomp ? "yes" : "no"}$`, "m"));
    const missing = expectedMissing(landlockAbi, seccomp);
    for (const part of missing) expect(run.stdout).toMatch(new RegExp(`^missing ${part}\\s`, "m"));
    if (missing.length === 0) expect(run.stdout).toMatch(/^enforced\s+filesystem, truncate/m);
    if (isRoot) {
      expect(run.stdout).toMatch(view ? /^read-only view\s+yes$/m : /^read-only view\s+no: /m);
      expect(run.stdout).toMatch(/^PID namespace\s+yes$/m);
    }
    expect(run.stdout).toMatch(/^exec helper\s+runs from its file$/m);
  });

  it("reports the fallback engine, which confines nothing, and exits 1", () => {
    const env = { EXACTSPAWN_NATIVE: "0" };
    const json = cli(["sandbox", "--json"], { env });
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      native: false,
      landlockAbi: 0,
      seccompFilter: false,
      readOnlyView: false,
      readOnlyViewUnavailable: "engine",
      readOnlyViewUserNamespace: false,
      missing: ["filesystem", "network", "syscalls"],
    });
    const human = cli(["sandbox"], { env });
    expect(human.status).toBe(1);
    expect(human.stdout).toMatch(/^engine\s+fallback: disabled by EXACTSPAWN_NATIVE$/m);
    expect(human.stdout).toMatch(/^Landlock\s+not probed \(needs the native engine\)$/m);
  });

  it("answers --help with exit 0", () => {
    const run = cli(["sandbox", "--help"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Usage: exactspawn sandbox \[--json\]/);
    expect(run.stdout).toContain("exactspawn.sandbox/v1");
  });

  it.each([
    [
      ["sandbox", "--bogus"],
      'exactspawn sandbox: unknown option --bogus (see "exactspawn sandbox --help")',
    ],
    [["sandbox", "--json=1"], "exactspawn sandbox: --json takes no value"],
    [["sandbox", "extra"], "exactspawn sandbox: sandbox takes no arguments"],
  ])("%j is a usage error: one line, exit 2", (args, line) => {
    const run = cli(args);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(`${line}\n`);
  });
});
