/**
 * The seccomp filter seen from a real sandboxed child: each attempt runs the
 * sandbox-probe fixture (raw system calls) inside a sandbox, and the verdict
 * is what the kernel answered plus, where there is one, the file's state as
 * this test sees it afterwards. The same probe outside a sandbox shows each
 * operation works here at all (the oracle).
 *
 * Red on the code before the filter was always installed: TIOCSTI, chmod
 * 4755, chown, setxattr, the key read and the memfd exec all succeeded from a
 * child sandboxed with the network off (the old socket filter had no rule).
 */
import { spawn as spawnPlain, spawnSync as spawnSyncPlain } from "node:child_process";
import { once } from "node:events";
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { nativeStatus, type SandboxOptions, sandboxSupport, spawn } from "../../src/index.js";
import { fixtureBinary } from "../fixtures/build.js";
import { sandboxDirs } from "../helpers/sandbox-dirs.js";

const full = nativeStatus().loaded && sandboxSupport().missing.length === 0;
const root = process.getuid?.() === 0;

const probe = fixtureBinary("sandbox-probe");
const { inside, outside } = sandboxDirs("exactspawn-syscalls-", full);

const executable = [dirname(probe), "/usr", "/bin", "/lib", "/lib64"].filter((dir) =>
  existsSync(dir),
);
// Capabilities kept: a root child without them would be refused TIOCSTI and
// chown by the kernel anyway, and this file proves the filter alone.
const box: SandboxOptions = { writable: [inside], executable, keepCapabilities: true };

async function sandboxed(args: string[], sandbox: SandboxOptions = box, stdin?: number) {
  const result = await spawn(probe, args, {
    sandbox,
    stdio: [stdin ?? "ignore", "pipe", "pipe"],
    reject: false,
  });
  return String(result.stdout).trim();
}

function plain(args: string[]): string {
  return spawnSyncPlain(probe, args, { encoding: "utf8" }).stdout.trim();
}

function file(name: string, mode = 0o755): string {
  const path = join(outside, name);
  writeFileSync(path, "#!/bin/sh\n");
  chmodSync(path, mode);
  return path;
}

describe.runIf(full)("sandbox: the system-call filter, from a real child", () => {
  it("refuses TIOCSTI on a terminal the child inherited", async () => {
    const holder = spawnPlain(probe, ["pty-hold"], { stdio: ["pipe", "pipe", "inherit"] });
    try {
      const [slave] = (await once(createInterface({ input: holder.stdout }), "line")) as [string];
      const fd = openSync(slave, constants.O_RDWR | constants.O_NOCTTY);
      try {
        expect(await sandboxed(["tiocsti", "0"], box, fd)).toBe("ioctl EPERM");
        if (root) {
          // The oracle: unconfined, root may type into any terminal.
          const unconfined = await spawn(probe, ["tiocsti", "0"], {
            stdio: [fd, "pipe", "pipe"],
          });
          expect(String(unconfined.stdout).trim()).toBe("ok");
        }
      } finally {
        closeSync(fd);
      }
    } finally {
      holder.stdin.end();
      await once(holder, "exit");
    }
  });

  it.runIf(root)(
    "refuses a setuid or setgid bit outside writable, not an ordinary mode",
    async () => {
      const target = file("suid-target", 0o755);
      expect(await sandboxed(["chmod", target, "4755"])).toBe("chmod EPERM");
      expect(await sandboxed(["chmod", target, "2755"])).toBe("chmod EPERM");
      expect(statSync(target).mode & 0o7777).toBe(0o755);
      const own = join(inside, "own");
      writeFileSync(own, "");
      expect(await sandboxed(["chmod", own, "700"])).toBe("ok");
      expect(statSync(own).mode & 0o7777).toBe(0o700);
      expect(plain(["chmod", file("oracle"), "4755"])).toBe("ok");
    },
  );

  it.runIf(root)("refuses an owner change", async () => {
    const target = file("chown-target");
    expect(await sandboxed(["chown", target, "65534"])).toBe("chown EPERM");
    expect(statSync(target).uid).toBe(0);
  });

  it("refuses an extended-attribute change", async () => {
    const target = file("xattr-target");
    const oracle = file("xattr-oracle");
    const works = plain(["setxattr", oracle]) === "ok";
    expect(await sandboxed(["setxattr", target])).toBe("setxattr EPERM");
    if (works) expect(plain(["getxattr", target])).toBe("getxattr ENODATA");
  });

  it("cannot read a key the host added to its keyring", async () => {
    const serial = plain(["add-key"]);
    expect(serial).toMatch(/^\d+$/);
    try {
      expect(plain(["read-key", serial])).toBe("host-secret");
      expect(await sandboxed(["read-key", serial])).toBe("keyctl EPERM");
      expect(await sandboxed(["add-key"])).toBe("add_key EPERM");
    } finally {
      plain(["revoke-key", serial]);
    }
  });

  // Landlock has no right for permission bits or times and the filter sees
  // only setuid and setgid bits: the read-only mount view refuses the rest
  // outside writable (docs/sandbox.md, "The read-only mount view").
  it.runIf(sandboxSupport().readOnlyView)(
    "refuses permission bits and times of its own files outside writable (the read-only view)",
    async () => {
      const target = file("view-target", 0o700);
      const owned = { writable: [inside], executable }; // capabilities dropped: only ownership counts
      expect(await sandboxed(["chmod", target, "777"], owned)).toBe("chmod EROFS");
      expect(statSync(target).mode & 0o7777).toBe(0o700);
      const touched = await spawn("/usr/bin/touch", ["-d", "2000-01-01T00:00:00Z", target], {
        sandbox: owned,
        reject: false,
      });
      expect(touched.exitCode).not.toBe(0);
      expect(touched.stderr).toContain("Read-only file system");
      expect(statSync(target).mtime.getUTCFullYear()).not.toBe(2000);
      // Inside writable both still work.
      const own = join(inside, "view-own");
      writeFileSync(own, "");
      expect(await sandboxed(["chmod", own, "700"], owned)).toBe("ok");
      expect(statSync(own).mode & 0o7777).toBe(0o700);
      // The oracle: without the view, the same sandbox changes both (the gap
      // on hosts that cannot make one).
      const open = { ...owned, readOnlyView: false };
      expect(await sandboxed(["chmod", target, "777"], open)).toBe("ok");
      expect(statSync(target).mode & 0o7777).toBe(0o777);
      const retouched = await spawn("/usr/bin/touch", ["-d", "2000-01-01T00:00:00Z", target], {
        sandbox: open,
        reject: false,
      });
      expect(retouched.exitCode).toBe(0);
      expect(statSync(target).mtime.getUTCFullYear()).toBe(2000);
    },
  );

  it("cannot execute a program copied into a memfd, unless executeWritable", async () => {
    const MFD_NOEXEC_SEAL = "8";
    expect(await sandboxed(["memfd-exec", "/bin/true", "0"])).toBe("memfd_create EPERM");
    // A sealed memfd is still there for data, and cannot be executed.
    expect(await sandboxed(["memfd-exec", "/bin/true", MFD_NOEXEC_SEAL])).toBe("execveat EACCES");
    // /bin/true ran: it prints nothing.
    expect(
      await sandboxed(["memfd-exec", "/bin/true", "0"], { ...box, executeWritable: true }),
    ).toBe("");
  });
});
