/**
 * Resource exhaustion in the host: running out of fds (EMFILE) and out of
 * processes (EAGAIN). Each host lowers its own limit after loading the
 * library (module loading itself needs more than 40 fds at once), spawns with
 * pipes until the spawn fails, checks the error is named, then closes
 * everything and proves it recovers with no fd, pidfd or zombie left.
 */
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus } from "../../src/native.js";
import { privateLibrary, removeDir, runHost, scratchDir } from "./host.js";

let dir: string;
beforeAll(() => {
  dir = scratchDir("exactspawn-faults-");
});
afterAll(() => removeDir(dir));

interface ExhaustReport {
  started: number;
  code: string | undefined;
  syscall: string | undefined;
  name: string | undefined;
  recovered: string;
  before: { fds: number; pidfds: number };
  after: { fds: number; pidfds: number; zombies: number };
}

// Spawns piped sleepers until one fails, then kills them all and checks the host.
const EXHAUST = (limitCommand: string) => `
  import { execFileSync } from "node:child_process";
  const { spawn, nativeStatus } = await import(DIST);
  // The fallback is not held to the fd count (Node leaves the failed spawn's
  // pipes open, see below): waiting for it there only ran out the settle cap.
  const fdsSettle = nativeStatus().loaded ? () => fds() <= before.fds : () => true;
  // Warm up: the first spawn and console output create lazily opened fds.
  console.log("warm", (await spawn("/bin/echo", ["x"])).stdout.trim());
  await settle(() => pidfds() === 0);
  ${limitCommand}
  const before = { fds: fds(), pidfds: pidfds() };
  const live = [];
  let failure;
  for (let i = 0; i < 400 && failure === undefined; i++) {
    let sp;
    try {
      sp = spawn("/bin/sleep", ["60"], { stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      failure = error;
      break;
    }
    if (sp.pid === undefined) {
      try { await sp; } catch (error) { failure = error; }
      break;
    }
    live.push(sp);
  }
  for (const sp of live) sp.kill("SIGKILL");
  await Promise.allSettled(live.map((sp) => sp.result));
  const recovered = (await spawn("/bin/echo", ["recovered"])).stdout.trim();
  await settle(() => pidfds() === before.pidfds && fdsSettle() && zombies() === 0);
  report({
    started: live.length,
    code: failure?.code,
    syscall: failure?.syscall,
    name: failure?.constructor?.name,
    recovered,
    before,
    after: { fds: fds(), pidfds: pidfds(), zombies: zombies() },
  });
`;

describe("EMFILE: a host that runs out of fds while spawning with pipes", () => {
  it("fails with a named error, then recovers with nothing leaked", () => {
    const run = runHost<ExhaustReport>(
      dir,
      EXHAUST(`execFileSync("prlimit", ["--pid", String(process.pid), "--nofile=40:4096"]);`),
    );
    expect(run.signal).toBeNull();
    expect(run.status).toBe(0);
    const r = run.report!;
    console.log(`EMFILE (${nativeStatus().loaded ? "native" : "fallback"}): ${JSON.stringify(r)}`);
    expect(r.started).toBeGreaterThan(0);
    expect(r.recovered).toBe("recovered");
    expect(r.after.pidfds).toBe(r.before.pidfds);
    expect(r.after.zombies).toBe(0);
    expect(r.code).toBe("EMFILE");
    if (nativeStatus().loaded) {
      // Whichever fd runs out first: a stdio pipe, or the pidfd (then the
      // child is killed and reaped before the error is thrown).
      expect(["pipe2", "pidfd_open"]).toContain(r.syscall);
      expect(r.after.fds).toBeLessThanOrEqual(r.before.fds);
    } else {
      // child_process gives up before it sets up stdio; the failure still
      // arrives as a named EMFILE error. Node 20 itself leaves the pipes it
      // made for that spawn open, so the fallback is not held to the fd count.
      expect(r.syscall).toBe("spawn");
    }
  });
});

// RLIMIT_NPROC is not enforced for root (CAP_SYS_RESOURCE / CAP_SYS_ADMIN), so
// the host runs as `nobody` via setpriv. The limit counts every task of that
// user, Node's own threads included.
const setpriv = spawnSync("setpriv", ["--version"]).status === 0;
const isRoot = process.getuid?.() === 0;
// Not under npm run test:asan: there the nobody host did not finish within its
// 120 s (no sanitizer report; the ASan runtime's own thread and memory needs
// under a 6-task limit are the suspect, see the issue #7 report).
const underAsan = process.env["EXACTSPAWN_EXPECT_ASAN"] === "1";
describe.runIf(setpriv && isRoot && !underAsan)(
  "EAGAIN: a host that hits its process limit (run as nobody: root ignores RLIMIT_NPROC)",
  () => {
    it("fails with EAGAIN, then recovers with nothing leaked", () => {
      const run = runHost<ExhaustReport>(
        dir,
        EXHAUST(`
          const tasks = Number(execFileSync("ps", ["-L", "-u", "nobody", "--no-headers"]).toString().trim().split("\\n").length);
          execFileSync("prlimit", ["--pid", String(process.pid), "--nproc=" + (tasks + 6) + ":" + (tasks + 6)]);
        `),
        {
          wrap: ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"],
          // nobody may not be able to read the checkout (a clone in a 0700 home).
          library: privateLibrary(dir),
        },
      );
      expect(run.signal).toBeNull();
      expect({ status: run.status, stderr: run.stderr }).toMatchObject({ status: 0 });
      const r = run.report!;
      console.log(
        `EAGAIN (${nativeStatus().loaded ? "native" : "fallback"}): ${JSON.stringify(r)}`,
      );
      expect(r.code).toBe("EAGAIN");
      expect(r.started).toBeGreaterThan(0);
      expect(r.recovered).toBe("recovered");
      expect(r.after).toEqual({ fds: r.after.fds, pidfds: r.before.pidfds, zombies: 0 });
      expect(r.after.fds).toBeLessThanOrEqual(r.before.fds);
    });
  },
);

// Finding 7 (issue 27): the host's address space runs out while spawnSync's
// output grows. The failure is named (ENOMEM, step "capture") and the child
// is killed and reaped before it is thrown: it neither runs on unseen nor
// stays a zombie. Seen red on 08fb2db: a bare "std::bad_alloc" with no code,
// and the child left a zombie. Not under npm run test:asan: ASan's allocator
// aborts on an allocation failure instead of throwing.
describe.runIf(nativeStatus().loaded && !underAsan)(
  "ENOMEM: spawnSync's output outgrows the host's memory",
  () => {
    it("throws a named ENOMEM after ending and reaping the child", () => {
      const pidFile = `${dir}/enomem-child.pid`;
      const run = runHost<{
        code: unknown;
        errno: unknown;
        syscall: unknown;
        step: unknown;
        message: string;
        childAlive: boolean;
        zombies: number;
      }>(
        dir,
        `
      import { execFileSync } from "node:child_process";
      import { existsSync, readFileSync } from "node:fs";
      const { spawnSync } = await import(DIST);
      spawnSync("/bin/true", []);
      const size = Number(/VmSize:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]) * 1024;
      // Room for the host as it is and 256 MiB more: the output needs 1 GiB.
      execFileSync("prlimit", ["--pid", String(process.pid), "--as=" + (size + 256 * 1024 * 1024)]);
      let failure;
      try {
        spawnSync("/bin/sh", ["-c", "echo $$ > ${pidFile}; exec head -c 1073741824 /dev/zero"], {
          maxBuffer: 2 * 1024 * 1024 * 1024,
        });
      } catch (error) {
        failure = error;
      }
      const pid = readFileSync(${JSON.stringify(pidFile)}, "utf8").trim();
      report({
        code: failure?.code,
        errno: failure?.errno,
        syscall: failure?.syscall,
        step: failure?.step,
        message: String(failure?.message),
        childAlive: existsSync("/proc/" + pid),
        zombies: zombies(),
      });`,
      );
      expect(run.signal).toBeNull();
      expect(run.report).toMatchObject({
        code: "ENOMEM",
        errno: -12,
        step: "capture",
        childAlive: false,
        zombies: 0,
      });
    });
  },
);
