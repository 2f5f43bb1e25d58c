/**
 * The read-only mount view seen from real sandboxed children (root host):
 * outside `writable` every mount is read-only in the child's own mount
 * namespace, so the permission bits and times Landlock has no right for are
 * refused too (EROFS); inside `writable` nothing changes; the host's mount
 * table is the same during and after, nothing propagating back. A child that
 * changes its uid (the copy-on-write child path) is covered as well, and a
 * host that is not root (a test user) gets the view in a user namespace. The
 * oracle for each refusal is the same step with `readOnlyView: false`.
 *
 * Red before the view (the step's chmod 0777 and touch -d succeeded outside
 * writable), and red again with the remount step skipped in
 * native/core/mount_view.cc (the mounts stayed read-write); the non-root
 * host's test red with the user-namespace view skipped there. The nosuid and
 * nodev tests red with the mount_setattr of the clones removed there (the
 * entered process printed 0, the device took the write).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { once } from "node:events";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  nativeStatus,
  type SandboxOptions,
  sandboxSupport,
  spawn,
  spawnSync as spawnSyncSandboxed,
} from "../../src/index.js";
import { PACKAGE_ROOT } from "../../src/native.js";
import { fixtureBinary } from "../fixtures/build.js";

const view = nativeStatus().loaded && sandboxSupport().readOnlyView;
const root = process.getuid?.() === 0;
// The tests of a user that is not root confine it with Landlock as well, which
// some hosts lack (qemu-user: ENOSYS); there they are skipped, and say so.
const landlock = sandboxSupport().landlockAbi > 0;
const noLandlock = landlock ? "" : " (skipped: no Landlock here)";

// Made only where the tests run (a skipped file runs no afterAll).
const base = view ? mkdtempSync(join(tmpdir(), "exactspawn-view-")) : "/nonexistent";
const inside = join(base, "inside");
const outside = join(base, "outside");
if (view) {
  mkdirSync(inside);
  mkdirSync(outside);
}
afterAll(() => {
  if (view) rmSync(base, { recursive: true, force: true });
});

async function sh(script: string, sandbox: SandboxOptions, uid?: number) {
  const result = await spawn("/bin/sh", ["-c", script], {
    env: { PATH: "/usr/bin:/bin" },
    sandbox,
    reject: false,
    ...(uid === undefined ? {} : { uid, gid: uid }),
  });
  return { code: result.exitCode, out: String(result.stdout), err: String(result.stderr) };
}

function mountTable(): string {
  return readFileSync("/proc/self/mountinfo", "utf8");
}

describe.runIf(view)("sandbox: the read-only mount view", () => {
  it("sandboxSupport() says the view can be made here, and why not elsewhere", () => {
    expect(sandboxSupport()).toMatchObject({
      readOnlyView: true,
      readOnlyViewUnavailable: undefined,
    });
  });

  it("refuses chmod and times outside writable (EROFS); inside, writes and chmod work", async () => {
    const target = join(outside, "target");
    writeFileSync(target, "intact");
    chmodSync(target, 0o600);
    const before = statSync(target);
    const box = { writable: [inside] };
    const refused = await sh(
      `chmod 0777 ${target}; touch -d 2000-01-01 ${target}; echo x > ${target}`,
      box,
    );
    expect(refused.err.match(/Read-only file system/g)).toHaveLength(3);
    const after = statSync(target);
    expect(after.mode & 0o7777).toBe(0o600);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(readFileSync(target, "utf8")).toBe("intact");
    const own = join(inside, "own");
    const allowed = await sh(`echo ok > ${own} && chmod 0640 ${own} && echo done`, box);
    expect(allowed.out).toBe("done\n");
    expect(statSync(own).mode & 0o7777).toBe(0o640);
    // spawnSync takes the same child path.
    const sync = spawnSyncSandboxed("/bin/chmod", ["0777", target], {
      sandbox: box,
      reject: false,
    });
    expect(String(sync.stderr)).toContain("Read-only file system");
    expect(statSync(target).mode & 0o7777).toBe(0o600);
    // The oracle: the same step without the view.
    expect((await sh(`chmod 0777 ${target}`, { ...box, readOnlyView: false })).code).toBe(0);
    expect(statSync(target).mode & 0o7777).toBe(0o777);
  });

  it("an inherited working directory inside writable stays writable", () => {
    // A host whose cwd is the writable directory, spawning without `cwd`:
    // the child's directory is entered again once the view is made (it was
    // left on the read-only mount beneath the writable path's clone: EROFS).
    const host = `
      const { spawn } = await import(${JSON.stringify(join(PACKAGE_ROOT, "dist", "index.js"))});
      const r = await spawn("/bin/sh", ["-c", "echo x > relative && pwd"], {
        sandbox: { writable: [process.cwd()] }, reject: false });
      console.log(JSON.stringify({ out: r.stdout, err: r.stderr }));`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", host], {
      cwd: inside,
      encoding: "utf8",
    });
    expect(JSON.parse(run.stdout)).toEqual({ out: `${inside}\n`, err: "" });
    expect(readFileSync(join(inside, "relative"), "utf8")).toBe("x\n");
  });

  it("writable: ['/'] makes no view (nothing to make read-only)", async () => {
    const target = join(outside, "slash");
    writeFileSync(target, "");
    chmodSync(target, 0o600);
    const run = await sh(`chmod 0640 ${target}`, { writable: ["/"], executeWritable: true });
    expect(run.code).toBe(0);
    expect(statSync(target).mode & 0o7777).toBe(0o640);
  });

  it("cannot reach the host's mounts through /proc/<pid>/root", async () => {
    const target = join(outside, "through-proc");
    writeFileSync(target, "");
    chmodSync(target, 0o600);
    const run = await sh(
      `chmod 0777 /proc/${process.pid}/root${target}; chmod 0777 /proc/1/root${target}`,
      { writable: [inside] },
    );
    expect(run.code).not.toBe(0);
    expect(statSync(target).mode & 0o7777).toBe(0o600);
  });

  it("with writable: [] everything is read-only, the null devices still writable", async () => {
    const target = join(outside, "empty-box");
    writeFileSync(target, "");
    const run = await sh(`echo x > /dev/null && echo null-ok; chmod 0700 ${target}`, {
      writable: [],
    });
    expect(run.out).toBe("null-ok\n");
    expect(run.err).toContain("Read-only file system");
  });

  it("a writable path nested in another stays removable (no mount of its own)", async () => {
    const work = join(base, "work");
    const nested = join(work, "tmp");
    mkdirSync(nested, { recursive: true });
    const run = await sh(`rm -r ${nested} && mkdir ${nested} && echo done`, {
      writable: [work, nested],
    });
    expect(run).toMatchObject({ code: 0, out: "done\n" });
  });

  it("leaves the host's mount table as it was, during the child's life and after", async () => {
    const before = mountTable();
    const child = spawn("/bin/sh", ["-c", "grep -c . /proc/self/mountinfo; read line"], {
      sandbox: { writable: [inside] },
      stdio: ["pipe", "pipe", "pipe"],
    });
    // The child's own table has its writable path mounted read-write over a
    // read-only root; the host's has neither.
    const lines = child.stdout as NodeJS.ReadableStream;
    await new Promise((resolve) => lines.once("data", resolve));
    expect(mountTable()).toBe(before);
    (child.stdin as NodeJS.WritableStream).end("\n");
    await child;
    expect(mountTable()).toBe(before);
    const own = await sh("cat /proc/self/mountinfo", { writable: [inside] });
    const rootLine = own.out.split("\n").find((line) => line.split(" ")[4] === "/");
    expect(rootLine?.split(" ")[5]).toMatch(/^ro,/);
    const insideLine = own.out.split("\n").find((line) => line.split(" ")[4] === inside);
    expect(insideLine?.split(" ")[5]).toMatch(/^rw,/);
  });
});

// A child that changes its uid starts copy-on-write; the view is made before
// the change (it needs CAP_SYS_ADMIN), and covers the files the new user owns.
describe.runIf(view && root && landlock)(
  `sandbox: the read-only mount view, uid exec control${noLandlock}`,
  () => {
    const account = testUserWithDirs("esview", "/tmp/exactspawn-view-uid-");

    it("refuses the new user's chmod and touch outside writable", async () => {
      const { uid, dir } = account;
      const target = join(dir, "out", "theirs");
      writeFileSync(target, "");
      chownSync(target, uid, uid);
      chmodSync(target, 0o600);
      const box = { writable: [join(dir, "in")] };
      const refused = await sh(
        `id -u; chmod 0777 ${target}; touch -d 2000-01-01 ${target}; touch ${dir}/in/mine && echo wrote`,
        box,
        uid,
      );
      expect(refused.out).toBe(`${uid}\nwrote\n`);
      expect(refused.err.match(/Read-only file system/g)).toHaveLength(2);
      expect(statSync(target).mode & 0o7777).toBe(0o600);
      expect(statSync(join(dir, "in", "mine")).uid).toBe(uid);
      // The oracle: the same user's step without the view.
      const open = await sh(`chmod 0777 ${target}`, { ...box, readOnlyView: false }, uid);
      expect(open.code).toBe(0);
      expect(statSync(target).mode & 0o7777).toBe(0o777);
    });
  },
);

// Writable paths are nosuid and nodev in the view (issue 27): a setid file
// or a device node beneath them is inert for every process in the child's
// mount namespace. The sandboxed child itself also has no_new_privs, which
// alone keeps a setuid exec from raising it; a process that enters the
// namespace without it (nsenter, as root's tools do) shows what nosuid adds.
describe.runIf(view && root && existsSync("/usr/bin/nsenter"))(
  "sandbox: the read-only mount view, nosuid and nodev beneath writable",
  () => {
    const account = testUserWithDirs("esinert", "/tmp/exactspawn-view-inert-");

    it("a setuid-root file the host put in writable gives no one euid 0 in the view", async () => {
      const { uid, dir } = account;
      const inside = join(dir, "in");
      const suid = join(inside, "id-suid");
      copyFileSync("/usr/bin/id", suid);
      chmodSync(suid, 0o4755); // root's, made by the host: no filter involved
      const box = { writable: [inside], executeWritable: true };
      const child = spawn(
        "/bin/sh",
        ["-c", `${suid} -u; grep ' ${inside} ' /proc/self/mountinfo; read line`],
        {
          env: { PATH: "/usr/bin:/bin" },
          sandbox: box,
          uid,
          gid: uid,
          stdio: ["pipe", "pipe", "pipe"],
        },
      );
      try {
        const out = child.stdout as NodeJS.ReadableStream;
        let seen = "";
        while (!seen.includes(inside)) {
          const [chunk] = (await once(out, "data")) as [Buffer];
          seen += String(chunk);
        }
        // pid pinned: the child is waiting on its stdin, not reaped.
        const entered = spawnSync(
          "nsenter",
          [`--mount=/proc/${child.pid}/ns/mnt`, `--setuid=${uid}`, `--setgid=${uid}`, suid, "-u"],
          { encoding: "utf8" },
        );
        expect({ out: entered.stdout, err: entered.stderr }).toEqual({ out: `${uid}\n`, err: "" });
        const [own, mountLine] = seen.split("\n");
        expect(own).toBe(String(uid));
        expect(mountLine?.split(" ")[5]).toMatch(/^rw,nosuid,nodev/);
      } finally {
        (child.stdin as NodeJS.WritableStream).end("\n");
        await child;
      }
      // The oracle: the host's own mounts honour the bit.
      const host = spawnSync(
        "setpriv",
        [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", suid, "-u"],
        {
          encoding: "utf8",
        },
      );
      expect(host.stdout).toBe("0\n");
    });

    it("a device node the host put in writable cannot be opened; a listed device still can", async () => {
      const { dir } = account;
      const inside = join(dir, "in");
      const device = join(inside, "null");
      execFileSync("mknod", ["-m", "0666", device, "c", "1", "3"]);
      const box = { writable: [inside, "/dev/null"] };
      const run = await sh(`echo x > ${device}; echo x > /dev/null && echo listed-ok`, box);
      expect(run.out).toBe("listed-ok\n");
      expect(run.err).toContain("Permission denied");
      // The oracle: without the view the same write reaches the device.
      const open = await sh(`echo x > ${device} && echo wrote`, { ...box, readOnlyView: false });
      expect(open.out).toBe("wrote\n");
    });
  },
);

// A host that is not root (a test user) makes the view in a user namespace
// too: the child maps the host's uid and gid to themselves. Not with a uid
// exec control (the view is then not made; docs/sandbox.md).
const NON_ROOT_HOST = `
import { sandboxSupport, spawn } from "./dist/index.js";
const [dir] = process.argv.slice(1);
const target = dir + "/out/theirs";
const box = { writable: [dir + "/in"] };
const run = async (script, extra = {}) => {
  const r = await spawn("/bin/sh", ["-c", script], { sandbox: box, reject: false, ...extra });
  return { code: r.exitCode, out: r.stdout, err: r.stderr };
};
const support = sandboxSupport();
const view = await run("chmod 0777 " + target + "; touch -d 2000-01-01 " + target + "; touch " + dir + "/in/mine && id -u");
const withUid = await run("chmod 0777 " + target, { uid: process.getuid(), gid: process.getgid() });
console.log(JSON.stringify({ support, view, withUid }));`;

// The host runs as a test user with this Node: a Node under root's home (the
// matrix's cached builds) is out of its reach, and the test is skipped there.
const nodeReachable = (() => {
  const parts = process.execPath.split("/").filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const path = `/${parts.slice(0, i).join("/")}`;
    if ((statSync(path).mode & 0o001) === 0) return false;
  }
  return true;
})();

describe.runIf(
  nativeStatus().loaded && root && landlock && nodeReachable && existsSync(PACKAGE_ROOT),
)(
  `sandbox: the read-only mount view on a host that is not root${nodeReachable ? "" : " (skipped: this Node is out of reach of other users)"}${noLandlock}`,
  () => {
    const account = testUserWithDirs("esviewh", "/tmp/exactspawn-view-host-");

    it("refuses the host user's chmod and times outside writable (EROFS)", () => {
      const { uid, dir } = account;
      const target = join(dir, "out", "theirs");
      writeFileSync(target, "");
      chownSync(target, uid, uid);
      chmodSync(target, 0o600);
      const before = statSync(target).mtimeMs;
      const run = spawnSync(process.execPath, ["--input-type=module", "-e", NON_ROOT_HOST, dir], {
        cwd: PACKAGE_ROOT,
        uid,
        gid: uid,
        encoding: "utf8",
        env: { PATH: "/usr/bin:/bin", TMPDIR: dir, EXACTSPAWN_NATIVE: "required" },
      });
      expect(run.stderr).toBe("");
      const report = JSON.parse(run.stdout);
      expect(report.support).toMatchObject({
        readOnlyView: true,
        readOnlyViewUserNamespace: true,
      });
      expect(report.view.out).toBe(`${uid}\n`);
      expect(report.view.err.match(/Read-only file system/g)).toHaveLength(2);
      expect(statSync(target).mtimeMs).toBe(before);
      expect(statSync(join(dir, "in", "mine")).uid).toBe(uid);
      // A uid exec control: no view (a user namespace cannot combine with
      // it), so the old gap is back for that child.
      expect(report.withUid.code).toBe(0);
      expect(statSync(target).mode & 0o7777).toBe(0o777);
    });

    it("a failure in its copy-on-write child names the call and the step", () => {
      const { uid, dir } = account;
      // move_mount refused (as a container profile may): the probe, which
      // does not move a mount, still finds the view; the child reports the
      // call through its start-status pipe.
      const host = `
        import { spawn } from "./dist/index.js";
        const e = await spawn("/bin/true", [], { sandbox: { writable: [process.argv[1]] } })
          .then(() => null, (e) => e);
        console.log(JSON.stringify(e && { code: e.code, syscall: e.syscall, step: e.step }));`;
      const moveMount = 429; // one number on every architecture
      const real = spawnSync(
        fixtureBinary("without-syscall"),
        [
          String(moveMount),
          String(constants.errno.EPERM),
          "--",
          process.execPath,
          "--input-type=module",
          "-e",
          host,
          join(dir, "in"),
        ],
        {
          cwd: PACKAGE_ROOT,
          uid,
          gid: uid,
          encoding: "utf8",
          env: { PATH: "/usr/bin:/bin", TMPDIR: dir, EXACTSPAWN_NATIVE: "required" },
        },
      );
      expect(JSON.parse(real.stdout)).toEqual({
        code: "EPERM",
        syscall: "move_mount",
        step: "sandbox",
      });
    });
  },
);

// The host runs under a seccomp filter failing one call, as an old kernel or
// a container profile does (test/fixtures/without-syscall.c).
const HOST = `
import { sandboxSupport, spawn } from "./dist/index.js";
const support = sandboxSupport();
const error = await spawn("/bin/true", [], { sandbox: { writable: [] } }).then(() => null, (e) => e);
console.log(JSON.stringify({ support, error: error && { code: error.code, syscall: error.syscall, step: error.step } }));`;

function hostWithout(nr: number, errno: number) {
  const run = spawnSync(
    fixtureBinary("without-syscall"),
    [String(nr), String(errno), "--", process.execPath, "--input-type=module", "-e", HOST],
    {
      cwd: PACKAGE_ROOT,
      encoding: "utf8",
      env: { ...process.env, EXACTSPAWN_NATIVE: "", EXACTSPAWN_LOG_LEVEL: "" },
    },
  );
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as {
    support: Record<string, unknown>;
    error: Record<string, unknown> | null;
  };
}

describe.runIf(view && existsSync(PACKAGE_ROOT))(
  "sandbox: the read-only mount view's probe and failures",
  () => {
    it("a kernel without mount_setattr (Linux 5.12): no view, and sandboxes still run", () => {
      const report = hostWithout(442, constants.errno.ENOSYS);
      expect(report.support).toMatchObject({
        readOnlyView: false,
        readOnlyViewUnavailable: "kernel",
      });
      expect(report.error).toBeNull();
    });

    it.runIf(process.arch === "x64")(
      "a refused unshare fails the spawn, naming the call and the step",
      () => {
        const unshare = 272; // x86-64
        const report = hostWithout(unshare, constants.errno.EPERM);
        expect(report.support).toMatchObject({ readOnlyView: true });
        expect(report.error).toEqual({ code: "EPERM", syscall: "unshare", step: "sandbox" });
      },
    );
  },
);

/**
 * A test user (created in beforeAll, removed in afterAll) and a directory it
 * can reach (the test run's TMPDIR is 0700) holding `in/` and `out/`, both
 * owned by that user.
 */
function testUserWithDirs(prefix: string, dirPrefix: string): { uid: number; dir: string } {
  const user = `${prefix}${process.pid % 100000}`;
  const account = { uid: 0, dir: "" };
  beforeAll(() => {
    execFileSync("useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", user]);
    account.uid = Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
    account.dir = mkdtempSync(dirPrefix);
    chmodSync(account.dir, 0o755);
    for (const sub of ["in", "out"]) {
      mkdirSync(join(account.dir, sub));
      chownSync(join(account.dir, sub), account.uid, account.uid);
    }
  });
  afterAll(() => {
    if (account.dir !== "") rmSync(account.dir, { recursive: true, force: true });
    execFileSync("userdel", [user]);
  });
  return account;
}
