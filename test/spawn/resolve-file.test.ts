import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveFile } from "../../src/spawn/resolve-file.js";
import { privateLibrary, removeDir, runHost, scratchDir } from "../faults/host.js";

describe("resolveFile", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "exactspawn-resolve-"));
    for (const sub of ["a", "b", "c"]) mkdirSync(join(dir, sub));
    writeFileSync(join(dir, "a", "tool"), "", { mode: 0o644 });
    writeFileSync(join(dir, "b", "tool"), "");
    chmodSync(join(dir, "b", "tool"), 0o755);
    mkdirSync(join(dir, "c", "tool"));
    writeFileSync(join(dir, "c", "only-here"), "", { mode: 0o644 });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("uses a file containing a slash as is, resolved against cwd", () => {
    expect(resolveFile("./x/y", "/bin", "/work")).toBe("/work/x/y");
    expect(resolveFile("/abs/y", "/bin", "/work")).toBe("/abs/y");
  });

  it("returns what path.resolve returns for any path with a slash", () => {
    // Absolute paths that are already normal skip path.resolve: the oracle is
    // path.resolve itself, over paths built from the characters that matter.
    const piece = fc.constantFrom("/", ".", "a", "é", "..", "//");
    const path = fc.array(piece, { minLength: 1, maxLength: 12 }).map((p) => p.join(""));
    fc.assert(
      fc.property(path, (p) => {
        fc.pre(p.includes("/"));
        expect(resolveFile(p, undefined, "/cwd")).toBe(resolve("/cwd", p));
      }),
      { numRuns: 3000 },
    );
    for (const p of ["/", "//a", "/a/", "/a/.", "/a/..", "/a/./b", "/a//b", "/..a", "/a/.../b"]) {
      expect(resolveFile(p, undefined, "/cwd")).toBe(resolve("/cwd", p));
    }
  });

  it("takes the first executable regular file in the caller's PATH", () => {
    const path = [join(dir, "c"), join(dir, "a"), join(dir, "b")].join(":");
    expect(resolveFile("tool", path, "/")).toBe(join(dir, "b", "tool"));
  });

  it("treats an empty PATH entry as cwd", () => {
    expect(resolveFile("tool", ":/nonexistent", join(dir, "b"))).toBe(join(dir, "b", "tool"));
  });

  it("reports ENOENT when nothing matches and EACCES when only non-executables do", () => {
    expect(() => resolveFile("missing", join(dir, "a"), "/")).toThrow(
      expect.objectContaining({ code: "ENOENT", syscall: "posix_spawn", path: "missing" }),
    );
    expect(() => resolveFile("only-here", join(dir, "c"), "/")).toThrow(
      expect.objectContaining({ code: "EACCES" }),
    );
    expect(() => resolveFile("tool", "", "/")).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(() => resolveFile("tool", undefined, "/")).toThrow(
      expect.objectContaining({ code: "ENOENT" }),
    );
  });
});

// A host that is not root, with a directory only root may search first on its
// PATH (what `sudo -u` or a service unit inherits): the search skips that
// entry, as execvp and child_process do (seen red on 08fb2db: EACCES from the
// stat of that directory's `true` and `bash`, for spawn and runtime.bash).
describe.runIf(process.getuid?.() === 0)("command search on a host that is not root", () => {
  const user = `esrf${process.pid % 100000}`;
  let uid = 0;
  let scratch = "";
  beforeAll(() => {
    execFileSync("useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", user]);
    uid = Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
    scratch = scratchDir("exactspawn-search-");
    // Root's own directory: 0700, holding a bash and a true this user cannot reach.
    mkdirSync(join(scratch, "root-only"), { mode: 0o700 });
    for (const name of ["bash", "true", "only-root-has"]) {
      writeFileSync(join(scratch, "root-only", name), "#!/bin/sh\necho hidden\n", { mode: 0o755 });
    }
  });
  afterAll(() => {
    if (scratch !== "") removeDir(scratch);
    execFileSync("userdel", [user]);
  });

  const HOST = `
    import { createRuntime, spawn } from DIST;
    const PATH = process.env.PATH;
    const outcome = async (run) => {
      try {
        const r = await run();
        return { exitCode: r.exitCode, stdout: String(r.stdout) };
      } catch (error) {
        return { code: error.code, syscall: error.syscall, path: error.path };
      }
    };
    report({
      uid: process.getuid(),
      spawn: await outcome(() => spawn("true", [], { reject: false })),
      bash: await outcome(() => createRuntime({ parentEnv: { PATH } }).bash("echo ok")),
      missing: await outcome(() => spawn("only-root-has", [])),
    });`;

  it("skips a PATH entry it may not search: spawn and runtime.bash find /usr/bin", () => {
    const run = runHost<{
      uid: number;
      spawn: unknown;
      bash: unknown;
      missing: unknown;
    }>(scratch, HOST, {
      wrap: ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups"],
      library: privateLibrary(scratch),
      env: { PATH: `${join(scratch, "root-only")}:/usr/bin:/bin` },
    });
    expect(run.stderr).toBe("");
    expect(run.report).toEqual({
      uid,
      spawn: { exitCode: 0, stdout: "" },
      bash: { exitCode: 0, stdout: "ok\n" },
      // Found nowhere this user can see: ENOENT, not EACCES (nothing was found to refuse).
      missing: { code: "ENOENT", syscall: "posix_spawn", path: "only-root-has" },
    });
  });
});
