import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveFile } from "../../src/spawn/resolve-file.js";

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
