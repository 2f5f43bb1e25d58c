/**
 * A sandboxed step cannot reach its host's resource limits (issue 27,
 * finding 3): `prlimit64` on any pid but 0 is refused by the filter, so
 * `RLIMIT_CPU {1,1}` (the kernel then SIGKILLs the host) and
 * `RLIMIT_NOFILE {3,3}` (the host starves of descriptors) fail with EPERM,
 * while the step's own limits (`ulimit -n 64`, `prlimit --nofile … cmd`)
 * still work. Each host is a Node process of its own (test/faults/host.ts),
 * so a regression kills that host, not the test runner: as root, and as
 * `nobody` (a same-uid child is what the kernel lets change the limits).
 *
 * Red with the prlimit64 rule removed from native/core/seccomp_filter.cc
 * (npx node-gyp rebuild): the root host reported `Max cpu time 1 1` and the
 * probe's `ok`, the nobody host the same.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus, sandboxSupport } from "../../src/index.js";
import { privateLibrary, removeDir, runHost, scratchDir } from "../faults/host.js";
import { fixtureBinary } from "../fixtures/build.js";

const filtered = nativeStatus().loaded && !sandboxSupport().missing.includes("syscalls");
const root = process.getuid?.() === 0;
const setpriv = spawnSync("setpriv", ["--version"]).status === 0;
const prlimitTool = existsSync("/usr/bin/prlimit");

let dir = "";
let probe = "";
beforeAll(() => {
  dir = scratchDir("exactspawn-limits-");
  // A copy any user can run (the fixture directory lives in this run's TMPDIR).
  probe = join(dir, "sandbox-probe");
  copyFileSync(fixtureBinary("sandbox-probe"), probe);
});
afterAll(() => {
  if (dir !== "") removeDir(dir);
});

interface LimitsReport {
  before: string[];
  after: string[];
  cpu: string;
  nofile: string;
  util: { code: number | null; err: string } | null;
  own: { code: number | null; out: string; err: string };
}

const HOST = (probePath: string, withTool: boolean) => `
  import { readFileSync } from "node:fs";
  const { spawn } = await import(DIST);
  const limits = () => readFileSync("/proc/self/limits", "utf8").split("\\n")
    .filter((line) => /^Max (cpu time|open files)/.test(line))
    .map((line) => line.trim().split(/\\s{2,}/).slice(0, 3).join(" "));
  const box = { writable: [], executable: ${JSON.stringify(
    [probePath, "/usr", "/bin", "/lib", "/lib64"].filter((path) => existsSync(path)),
  )} };
  const run = async (file, args) => {
    const r = await spawn(file, args, { sandbox: box, reject: false, env: { PATH: "/usr/bin:/bin" } });
    return { code: r.exitCode, out: String(r.stdout).trim(), err: String(r.stderr).trim() };
  };
  const before = limits();
  const host = String(process.pid);
  const cpu = (await run(${JSON.stringify(probePath)}, ["prlimit", host, "0", "1"])).out;
  const nofile = (await run(${JSON.stringify(probePath)}, ["prlimit", host, "7", "3"])).out;
  const util = ${withTool} ? await run("/usr/bin/prlimit", ["--pid", host, "--cpu=1:1"]) : null;
  // The step's own limits: bash's ulimit (setrlimit), and prlimit(1) on a
  // command it then runs (prlimit64 with pid 0).
  const own = await run("/bin/bash", ["-c", ${JSON.stringify(
    `ulimit -n 64 && ulimit -n && ${prlimitTool ? "prlimit --nofile=32:32 " : ""}bash -c 'ulimit -n'`,
  )}]);
  report({ before, after: limits(), cpu, nofile, util: util && { code: util.code, err: util.err }, own });
`;

function check(run: ReturnType<typeof runHost<LimitsReport>>) {
  expect({ signal: run.signal, status: run.status, stderr: run.stderr }).toEqual({
    signal: null,
    status: 0,
    stderr: "",
  });
  const r = run.report as LimitsReport;
  expect(r.cpu).toBe("prlimit64 EPERM");
  expect(r.nofile).toBe("prlimit64 EPERM");
  expect(r.after).toEqual(r.before);
  if (r.util !== null) {
    expect(r.util.code).not.toBe(0);
    expect(r.util.err).toContain("Operation not permitted");
  }
  expect(r.own).toEqual({ code: 0, out: `64\n${prlimitTool ? 32 : 64}`, err: "" });
}

describe.runIf(filtered)("sandbox: the host's resource limits are out of reach", () => {
  it("a step's prlimit64 on its host fails with EPERM; the host keeps its limits", () => {
    check(runHost<LimitsReport>(dir, HOST(probe, prlimitTool)));
  });

  it.runIf(root && setpriv)("the same from a host that is not root (nobody)", () => {
    check(
      runHost<LimitsReport>(dir, HOST(probe, prlimitTool), {
        wrap: ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"],
        library: privateLibrary(dir),
      }),
    );
  });
});
