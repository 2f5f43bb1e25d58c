/**
 * Setuid and setgid bits cannot be planted at creation (issue 27, finding 4):
 * from a real sandboxed child, `mknod(S_IFREG | 06755)`, `creat`, `open` and
 * `openat` with `O_CREAT` or `O_TMPFILE` and a setid mode fail with EPERM
 * inside `writable` and leave no file; the same modes without the setid bits
 * work. `mkdir` has no rule: the kernel drops those bits there (checked
 * here). `openat2`, whose mode the filter cannot read, fails with ENOSYS, and
 * bash, coreutils, python3 and node (which fall back to `openat`, or never
 * use it) still work. The oracle: the same probe outside a sandbox plants the
 * bits.
 *
 * Red with each rule removed once from native/core/seccomp_filter.cc (npx
 * node-gyp build): mknod and mknodat (the file was 6755), creat, open,
 * openat (both the O_CREAT and the O_TMPFILE case), openat2 (`ok`).
 */
import { spawnSync as spawnSyncPlain } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nativeStatus, type SandboxOptions, sandboxSupport, spawn } from "../../src/index.js";
import { fixtureBinary } from "../fixtures/build.js";

const filtered = nativeStatus().loaded && sandboxSupport().missing.length === 0;
const x64 = process.arch === "x64"; // the probe's mknod, creat, open: x86-64 calls

const probe = fixtureBinary("sandbox-probe");
// Made only where the tests run (a skipped file runs no afterAll).
const base = filtered ? mkdtempSync(join(tmpdir(), "exactspawn-creation-")) : "/nonexistent";
const inside = join(base, "inside");
if (filtered) mkdirSync(inside);
afterAll(() => {
  if (filtered) rmSync(base, { recursive: true, force: true });
});

const executable = [dirname(probe), dirname(process.execPath), "/usr", "/bin", "/lib", "/lib64"]
  .filter((dir) => existsSync(dir))
  .filter((dir, i, all) => all.indexOf(dir) === i);
const box: SandboxOptions = { writable: [inside], executable };

async function sandboxed(args: string[]) {
  const result = await spawn(probe, args, { sandbox: box, reject: false });
  return String(result.stdout).trim();
}

function plain(args: string[]): string {
  return spawnSyncPlain(probe, args, { encoding: "utf8" }).stdout.trim();
}

const modeOf = (path: string) => statSync(path).mode & 0o7777;

describe.runIf(filtered && x64)("sandbox: no setid bits at creation, from a real child", () => {
  const calls = ["mknod", "mknodat", "creat", "open", "openat"] as const;

  it("refuses a setuid or setgid mode in mknod, mknodat, creat, open and openat", async () => {
    for (const call of calls) {
      for (const mode of ["4755", "2755", "6755"]) {
        const path = join(inside, `${call}-${mode}`);
        expect(await sandboxed([call, path, mode])).toBe(`${call} EPERM`);
        expect(existsSync(path)).toBe(false);
      }
      const ordinary = join(inside, `${call}-1755`);
      expect(await sandboxed([call, ordinary, "1755"])).toBe("ok");
      expect(modeOf(ordinary)).toBe(0o1755);
    }
  });

  it("refuses a setuid mode through O_TMPFILE", async () => {
    const path = join(inside, "tmpfile-4755");
    expect(await sandboxed(["tmpfile", inside, path, "4755"])).toBe("openat EPERM");
    expect(existsSync(path)).toBe(false);
    const ordinary = join(inside, "tmpfile-755");
    expect(await sandboxed(["tmpfile", inside, ordinary, "755"])).toBe("ok");
    expect(modeOf(ordinary)).toBe(0o755);
  });

  it("the oracle: outside a sandbox each of them plants the bits", () => {
    const outside = join(base, "oracle");
    mkdirSync(outside);
    for (const call of calls) {
      const path = join(outside, call);
      expect(plain([call, path, "6755"])).toBe("ok");
      expect(modeOf(path)).toBe(0o6755);
    }
    expect(plain(["tmpfile", outside, join(outside, "tmpfile"), "4755"])).toBe("ok");
    expect(modeOf(join(outside, "tmpfile"))).toBe(0o4755);
  });

  it("mkdir needs no rule: the kernel drops setid bits from its mode", async () => {
    const path = join(inside, "dir");
    expect(await sandboxed(["mkdir", path, "6755"])).toBe("ok");
    expect(modeOf(path)).toBe(0o755);
  });

  it("openat2 fails with ENOSYS; bash, coreutils, python3 and node still work", async () => {
    expect(plain(["openat2", "/etc/hostname"])).toBe("ok");
    expect(await sandboxed(["openat2", "/etc/hostname"])).toBe("openat2 ENOSYS");
    const work = join(inside, "tools");
    const script = [
      `mkdir -p ${work}/d && cd ${work}`,
      "echo one > a && cp a b && mv b d/c && cat d/c && ls d && rm -r d",
      "ln -s a link && readlink link && cp a e && chmod 0640 e && stat -c %a e",
      existsSync("/usr/bin/python3")
        ? `/usr/bin/python3 -c 'open("p","w").write("py"); print(open("p").read())'`
        : "echo py",
      `${process.execPath} -e 'const fs=require("fs"); fs.writeFileSync("n","node"); console.log(fs.readFileSync("n","utf8"))'`,
    ].join(" && ");
    const result = await spawn("/bin/bash", ["-c", script], {
      sandbox: box,
      env: { PATH: "/usr/bin:/bin" },
      reject: false,
    });
    expect({ code: result.exitCode, out: result.stdout, err: result.stderr }).toEqual({
      code: 0,
      out: "one\nc\na\n640\npy\nnode\n",
      err: "",
    });
    expect(readFileSync(join(work, "n"), "utf8")).toBe("node");
  });
});
