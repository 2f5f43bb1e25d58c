/**
 * Sandbox paths a step cannot redirect (issue 21, finding 5): a runtime
 * sandbox `writable: [work, work/tmp]`, step 1 replaces work/tmp by a link to
 * a directory outside, step 2 writes through it. Red on the code that resolved
 * each path with realpath: step 2 wrote outside.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createRuntime, nativeStatus, sandboxSupport } from "../../src/index.js";
import { resolveSandboxPaths } from "../../src/spawn/sandbox-paths.js";
import { refusal } from "../helpers/sandbox-refusal.js";

const full = nativeStatus().loaded && sandboxSupport().missing.length === 0;
const root = mkdtempSync(join(tmpdir(), "exactspawn-sandbox-paths-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function fresh(name: string) {
  const base = join(root, name);
  const work = join(base, "work");
  const outside = join(base, "outside");
  mkdirSync(join(work, "tmp"), { recursive: true });
  mkdirSync(outside);
  return { base, work, tmp: join(work, "tmp"), outside };
}

describe.runIf(full)("sandbox paths: one step cannot widen the next", () => {
  it("refuses a writable path redirected by an earlier step; nothing is written outside", async () => {
    const { work, tmp, outside } = fresh("runtime");
    const runtime = createRuntime({
      parentEnv: { PATH: "/usr/bin:/bin" },
      hostEnv: { W: work },
      sandbox: { writable: [work, tmp] },
    });
    const step1 = await runtime.bash(`rm -rf "$W/tmp" && ln -s ${outside} "$W/tmp"`);
    expect(step1.exitCode).toBe(0);
    const step2 = runtime.bash(`echo pwned > "$(realpath "$W/tmp")/bashrc"`, { reject: false });
    await expect(step2).rejects.toMatchObject({
      name: "SandboxError",
      code: "ERR_EXACTSPAWN_SANDBOX_PATH",
      field: "writable[1]",
      path: tmp,
    });
    expect(existsSync(join(outside, "bashrc"))).toBe(false);
  });
});

describe("resolving sandbox paths", () => {
  it("returns real paths unchanged; a host's own link where a step could write is refused too", () => {
    const { base, work, outside } = fresh("plain");
    expect(
      resolveSandboxPaths({ writable: [work], readable: [outside], executable: undefined }),
    ).toEqual({ write: [work], read: [outside], exec: undefined });
    // Once followed (issue 21); a link in TMPDIR could be anyone's (issue 35).
    const link = join(base, "link-to-outside");
    symlinkSync(outside, link);
    const error = refusal(() =>
      resolveSandboxPaths({ writable: [work], readable: [link], executable: undefined }),
    );
    expect(error).toMatchObject({ code: "ERR_EXACTSPAWN_SANDBOX_PATH", field: "readable[0]" });
    expect(error.path).toBe(link);
  });

  it("refuses a link inside a writable directory, for every field, and through a chain", () => {
    const { base, work, tmp, outside } = fresh("links");
    rmSync(tmp, { recursive: true });
    symlinkSync(outside, tmp);
    const chain = join(base, "chain");
    symlinkSync(join(work, "tmp"), chain); // a host link whose target passes through the step's
    for (const [fields, link] of [
      [{ writable: [work, tmp], readable: undefined, executable: undefined }, tmp],
      [{ writable: [work], readable: [join(tmp, ".")], executable: undefined }, tmp],
      [{ writable: [work], readable: undefined, executable: [chain] }, chain],
    ] as const) {
      const error = refusal(() => resolveSandboxPaths(fields));
      expect(error.code).toBe("ERR_EXACTSPAWN_SANDBOX_PATH");
      expect(error.path).toBe(link);
      expect(error.message).not.toContain("pwned");
    }
    writeFileSync(join(outside, "f"), "");
    expect(readFileSync(join(outside, "f"), "utf8")).toBe("");
  });

  const systemLink = ["/lib64", "/bin", "/lib", "/var/run"].find(
    (path) => existsSync(path) && lstatSync(path).isSymbolicLink(),
  );

  it.runIf(systemLink !== undefined)(
    "refuses even a system link when it lies beneath a writable path of the same sandbox",
    () => {
      const error = refusal(() =>
        resolveSandboxPaths({ writable: ["/"], readable: [systemLink!], executable: undefined }),
      );
      expect(error).toMatchObject({ code: "ERR_EXACTSPAWN_SANDBOX_PATH", path: systemLink });
      expect(error.message).toContain("inside the writable directory /");
    },
  );

  it("names the field of a missing path, keeping its system error", () => {
    const { work } = fresh("missing");
    expect(() =>
      resolveSandboxPaths({
        writable: [work, join(work, "nope")],
        readable: undefined,
        executable: undefined,
      }),
    ).toThrow(
      expect.objectContaining({
        code: "ENOENT",
        syscall: "realpath",
        field: "writable[1]",
        message: expect.stringContaining("sandbox.writable[1]"),
      }),
    );
  });
});
