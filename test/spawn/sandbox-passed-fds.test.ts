/**
 * Descriptors the host passes to a sandboxed child (issue 27, finding 5),
 * what holds at the kernel's level, as docs/sandbox.md states it: a passed
 * file is the host's file on the host's mounts, so neither Landlock (checked
 * at open) nor the read-only view (the descriptor's mount is the host's)
 * covers it. Its user may change its ordinary permission bits and its times
 * through the descriptor; setid bits, owners and extended attributes are
 * refused by the filter; and a child running as a user that does not own
 * the file gets EPERM from the kernel for all of them. The filter cannot do
 * better: it sees a descriptor's number, which `dup2` changes, and refusing
 * fchmod/futimens outright breaks cp, touch and install inside `writable`.
 *
 * Red with the fchmod rule removed from native/core/seccomp_filter.cc: the
 * 4755 went through the passed descriptor.
 */
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  openSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus, type SandboxOptions, sandboxSupport, spawn } from "../../src/index.js";
import { removeDir, scratchDir } from "../faults/host.js";
import { fixtureBinary } from "../fixtures/build.js";

const full = nativeStatus().loaded && sandboxSupport().missing.length === 0;
const root = process.getuid?.() === 0;
const NOBODY = 65534;

let dir = "";
let probe = "";
beforeAll(() => {
  dir = scratchDir("exactspawn-passed-fd-");
  probe = join(dir, "sandbox-probe"); // a copy another uid can run
  copyFileSync(fixtureBinary("sandbox-probe"), probe);
});
afterAll(() => {
  if (dir !== "") removeDir(dir);
});

/** Runs each probe operation in one sandboxed child holding `file` as fd 3. */
async function throughFd3(file: string, ops: string[][], uid?: number): Promise<string[]> {
  const fd = openSync(file, "r");
  try {
    const out: string[] = [];
    for (const op of ops) {
      const sandbox: SandboxOptions = {
        writable: [],
        executable: [dir, "/usr", "/lib", "/lib64"].filter((path) => existsSync(path)),
      };
      const result = await spawn(probe, op, {
        sandbox,
        stdio: ["ignore", "pipe", "pipe", fd],
        reject: false,
        ...(uid === undefined ? {} : { uid, gid: uid }),
      });
      out.push(String(result.stdout).trim() || String(result.stderr).trim());
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

function hostFile(name: string): string {
  const path = join(dir, name);
  writeFileSync(path, "host data\n");
  chmodSync(path, 0o600);
  return path;
}

describe.runIf(full && root)("sandbox: a descriptor the host passes (stdio[3])", () => {
  it("its owner may change ordinary bits and times through it, not setid bits or owners", async () => {
    const file = hostFile("owned"); // root's, as the child (uid 0) is
    const results = await throughFd3(file, [
      ["fchmod", "3", "4755"],
      ["fchown", "3", String(NOBODY)],
      ["fchmod", "3", "644"],
      ["futimens", "3"],
    ]);
    expect(results).toEqual(["fchmod EPERM", "fchown EPERM", "ok", "ok"]);
    const after = statSync(file);
    expect(after.mode & 0o7777).toBe(0o644);
    expect(after.uid).toBe(0);
    expect(after.mtime.getUTCFullYear()).toBe(2000);
  });

  it("a child running as another user changes nothing of it (the kernel's owner check)", async () => {
    const file = hostFile("not-theirs");
    const before = statSync(file);
    const results = await throughFd3(
      file,
      [
        ["fchmod", "3", "644"],
        ["futimens", "3"],
      ],
      NOBODY,
    );
    expect(results).toEqual(["fchmod EPERM", "utimensat EPERM"]);
    const after = statSync(file);
    expect(after.mode & 0o7777).toBe(0o600);
    expect(after.mtimeMs).toBe(before.mtimeMs);
  });
});
