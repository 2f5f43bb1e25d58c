/**
 * Sandbox paths are resolved without following a link a step or another user
 * could have made (issue 35, findings 1 and 6), played as the attacker:
 *
 * - Two steps with different grants: step 1 (`writable: [ws]`) replaces
 *   `ws/build` by a link to a root-only directory; step 2 (`writable:
 *   [ws/build]`, the usual narrower build step) must not write there. On a
 *   root host (a workspace under /root, every directory above it root-owned)
 *   and on a host that is not root (a test user, its own workspace). Red on
 *   the code that refused links beneath a writable path of the same sandbox
 *   only: step 2 wrote `pwned` into the root-only directory, and the test
 *   user's host into its own `secret`.
 * - Another user's link in a sticky world-writable directory (`/tmp/<job>`),
 *   with fs.protected_symlinks 0: the host must not follow it. Red on the same
 *   code: the host's step wrote into the directory the link named.
 * - The system's own links (`/lib64`, `/var/run`, `/bin`, …) still resolve.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime, nativeStatus, sandboxSupport, spawn } from "../../src/index.js";
import { resolveSandboxPaths } from "../../src/spawn/sandbox-paths.js";
import { privateLibrary, removeDir, runHost, scratchDir } from "../faults/host.js";
import { refusal } from "../helpers/sandbox-refusal.js";

const full = nativeStatus().loaded && sandboxSupport().missing.length === 0;
const root = process.getuid?.() === 0;
const setpriv = spawnSync("setpriv", ["--version"]).status === 0;
const PATH_ENV = { PATH: "/usr/bin:/bin" };

/** No link at all: the sandbox applies to nothing but `writable`/`readable` as given. */
const only = (writable: string[], readable?: string[]) => ({
  writable,
  readable: readable ?? undefined,
  executable: undefined,
});

/** A test user, created before the file's tests and removed after them. */
function testUser(prefix: string): { uid: number; gid: number; name: string } {
  const name = `${prefix}${process.pid % 100000}`;
  const user = { uid: -1, gid: -1, name };
  beforeAll(() => {
    if (!root) return;
    execFileSync("useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", name]);
    user.uid = Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim());
    user.gid = Number(execFileSync("id", ["-g", name], { encoding: "utf8" }).trim());
  });
  afterAll(() => {
    if (root && user.uid !== -1) execFileSync("userdel", [name]);
  });
  return user;
}

/** Runs `command` as `user` (bash -c), its stderr on failure. */
function asUser(user: { uid: number; gid: number }, command: string): void {
  execFileSync(
    "setpriv",
    [
      `--reuid=${user.uid}`,
      `--regid=${user.gid}`,
      "--clear-groups",
      "--",
      "/bin/bash",
      "-c",
      command,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
}

describe.runIf(full && root)("a root host: one step cannot widen the next through a link", () => {
  // A root host's workspace where every directory above it is root's and
  // writable by root only: under /root, as a host keeps it.
  let base = "";
  beforeAll(() => {
    base = mkdtempSync("/root/.exactspawn-links-");
  });
  afterAll(() => {
    if (base !== "") rmSync(base, { recursive: true, force: true });
  });

  it("step 2's writable ws/build, made a link to a root-only directory by step 1, is refused", async () => {
    const ws = join(base, "ws");
    const secret = join(base, "secret");
    mkdirSync(join(ws, "build"), { recursive: true });
    mkdirSync(secret, { mode: 0o700 });
    const runtime = createRuntime({ parentEnv: PATH_ENV });
    const step1 = await runtime.bash(`rm -rf '${ws}/build' && ln -s '${secret}' '${ws}/build'`, {
      sandbox: { writable: [ws] },
    });
    expect(step1.exitCode).toBe(0);
    expect(lstatSync(join(ws, "build")).isSymbolicLink()).toBe(true);
    const step2 = runtime.bash(`echo pwned > '${ws}/build/pwned'`, {
      sandbox: { writable: [join(ws, "build")] },
      reject: false,
    });
    await expect(step2).rejects.toMatchObject({
      name: "SandboxError",
      code: "ERR_EXACTSPAWN_SANDBOX_PATH",
      field: "writable[0]",
      path: join(ws, "build"),
    });
    expect(existsSync(join(secret, "pwned"))).toBe(false);
  });

  it("the same link is refused as readable and executable too (reading the root-only file)", () => {
    const ws = join(base, "ws2");
    const secret = join(base, "secret2");
    mkdirSync(ws);
    mkdirSync(secret, { mode: 0o700 });
    writeFileSync(join(secret, "key"), "k");
    symlinkSync(secret, join(ws, "src"));
    for (const fields of [
      only([], [join(ws, "src")]),
      { writable: [], readable: undefined, executable: [join(ws, "src")] },
    ]) {
      const error = refusal(() => resolveSandboxPaths(fields));
      expect(error).toMatchObject({ code: "ERR_EXACTSPAWN_SANDBOX_PATH", path: join(ws, "src") });
    }
  });
});

describe.runIf(full && root && setpriv)(
  "a host that is not root: one step cannot widen the next through a link",
  () => {
    const user = testUser("esl");
    let dir = "";
    beforeAll(() => {
      dir = scratchDir("exactspawn-links-host-");
    });
    afterAll(() => {
      if (dir !== "") removeDir(dir);
    });

    it("the test user's step 2 is refused; its own secret directory is untouched", () => {
      const library = privateLibrary(dir);
      const home = join(dir, "home");
      mkdirSync(join(home, "ws", "build"), { recursive: true });
      mkdirSync(join(home, "secret"));
      for (const path of [
        home,
        join(home, "ws"),
        join(home, "ws", "build"),
        join(home, "secret"),
      ]) {
        chownSync(path, user.uid, user.gid);
      }
      chmodSync(home, 0o700);
      const ws = join(home, "ws");
      const run = runHost<{ step1: number; step2: Record<string, unknown> }>(
        dir,
        `
        const { spawn } = await import(DIST);
        const env = ${JSON.stringify(PATH_ENV)};
        const step1 = await spawn("/bin/bash", ["-c", ${JSON.stringify(
          `rm -rf '${ws}/build' && ln -s '${home}/secret' '${ws}/build'`,
        )}], { env, sandbox: { writable: [${JSON.stringify(ws)}] } });
        let step2;
        try {
          const r = await spawn("/bin/bash", ["-c", ${JSON.stringify(
            `echo pwned > '${ws}/build/pwned'`,
          )}], { env, sandbox: { writable: [${JSON.stringify(join(ws, "build"))}] }, reject: false });
          step2 = { ran: r.exitCode };
        } catch (error) {
          step2 = { name: error.name, code: error.code, field: error.field, path: error.path };
        }
        report({ step1: step1.exitCode, step2 });
        `,
        {
          wrap: ["setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--"],
          library,
        },
      );
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" });
      expect(run.report).toEqual({
        step1: 0,
        step2: {
          name: "SandboxError",
          code: "ERR_EXACTSPAWN_SANDBOX_PATH",
          field: "writable[0]",
          path: join(ws, "build"),
        },
      });
      expect(existsSync(join(home, "secret", "pwned"))).toBe(false);
    });
  },
);

describe.runIf(full && root && setpriv)(
  "another user's link in a sticky world-writable directory (fs.protected_symlinks 0)",
  () => {
    const attacker = testUser("esa");
    const sysctl = "/proc/sys/fs/protected_symlinks";
    let saved: string | undefined;
    let dir = "";
    beforeAll(() => {
      dir = scratchDir("exactspawn-links-sticky-");
      // The kernel's own protection off, as on hosts that turn it off: the
      // library's rule must hold whatever the sysctl says.
      try {
        saved = readFileSync(sysctl, "utf8").trim();
        writeFileSync(sysctl, "0");
      } catch {
        saved = undefined;
      }
    });
    afterAll(() => {
      if (saved !== undefined) writeFileSync(sysctl, saved);
      if (dir !== "") removeDir(dir);
    });

    it("the host's writable /tmp/<job>, planted by another uid, is refused; the target is untouched", async () => {
      const tmp = join(dir, "tmp"); // a /tmp of its own: root's, 1777
      const target = join(dir, "root-only");
      mkdirSync(tmp);
      chmodSync(tmp, 0o1777);
      mkdirSync(target, { mode: 0o700 });
      const job = join(tmp, "job");
      asUser(attacker, `ln -s '${target}' '${job}'`);
      expect(lstatSync(job).uid).toBe(attacker.uid);
      const step = spawn("/bin/bash", ["-c", `echo pwned > '${job}/pwned'`], {
        env: PATH_ENV,
        sandbox: { writable: [job] },
        reject: false,
      });
      if (readFileSync(sysctl, "utf8").trim() === "0") {
        // With the sysctl at 0 the kernel itself follows the link: the oracle.
        expect(realpathSync(job)).toBe(target);
        await expect(step).rejects.toMatchObject({
          name: "SandboxError",
          code: "ERR_EXACTSPAWN_SANDBOX_PATH",
          field: "writable[0]",
          path: job,
        });
      } else {
        // A sysctl this test could not lower: the kernel refuses first (EACCES).
        await expect(step).rejects.toThrow();
      }
      expect(existsSync(join(target, "pwned"))).toBe(false);
    });
  },
);

describe.runIf(root && setpriv && existsSync("/usr/local"))(
  "links beneath /usr in directories someone else can write",
  () => {
    // A system tree, so only the ownership of the directories above a link decides.
    const other = testUser("eso");
    let base = "";
    beforeAll(() => {
      base = mkdtempSync("/usr/local/.exactspawn-links-");
      chmodSync(base, 0o755);
      mkdirSync(join(base, "target"));
    });
    afterAll(() => {
      if (base !== "") rmSync(base, { recursive: true, force: true });
    });

    /** A root-made link to base/target in `dir` (made first, then shaped by `shape`). */
    function linkIn(name: string, shape: (dir: string) => void): string {
      const dir = join(base, name);
      mkdirSync(dir, { recursive: true });
      shape(dir);
      const link = join(dir, "link");
      symlinkSync(join(base, "target"), link);
      return link;
    }

    it("a link in a root-only directory there is followed (the control)", () => {
      const link = linkIn("ours", () => {});
      expect(resolveSandboxPaths(only([], [link]))).toMatchObject({ read: [join(base, "target")] });
    });

    it("a link in a directory another user owns is refused, whoever made the link", () => {
      const link = linkIn("theirs", (dir) => chownSync(dir, other.uid, other.gid));
      const error = refusal(() => resolveSandboxPaths(only([], [link])));
      expect(error).toMatchObject({ code: "ERR_EXACTSPAWN_SANDBOX_PATH", path: link });
    });

    it("a link in a group-writable directory is refused", () => {
      const link = linkIn("shared", (dir) => chmodSync(dir, 0o775));
      const error = refusal(() => resolveSandboxPaths(only([], [link])));
      expect(error).toMatchObject({ code: "ERR_EXACTSPAWN_SANDBOX_PATH", path: link });
    });

    it("a link in a root-only directory beneath another user's is refused (they can swap it)", () => {
      const link = linkIn("theirs-above/inner", (dir) =>
        chownSync(join(dir, ".."), other.uid, other.gid),
      );
      const error = refusal(() => resolveSandboxPaths(only([], [link])));
      expect(error).toMatchObject({ code: "ERR_EXACTSPAWN_SANDBOX_PATH", path: link });
    });
  },
);

describe("the system's own links are still followed", () => {
  const systemLinks = ["/bin", "/sbin", "/lib", "/lib64", "/var/run", "/var/lock"].filter(
    (path) => existsSync(path) && lstatSync(path).isSymbolicLink(),
  );

  it.runIf(systemLinks.length > 0)("each resolves to its real path, in every field", () => {
    const real = systemLinks.map((path) => realpathSync(path));
    expect(
      resolveSandboxPaths({ writable: [], readable: systemLinks, executable: systemLinks }),
    ).toEqual({ write: [], read: real, exec: real });
  });

  it.runIf(full && existsSync("/bin/true"))("a sandbox naming them runs", async () => {
    const result = await spawn("/bin/true", [], {
      env: PATH_ENV,
      sandbox: { writable: [], executable: ["/usr", ...systemLinks] },
    });
    expect(result.exitCode).toBe(0);
  });
});
