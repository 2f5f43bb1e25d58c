/**
 * The sandbox policy without a kernel: shape validation and failing closed
 * against what a (fake) kernel reports it can enforce.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { normalizeSandbox, resolveSandbox, supportFrom } from "../../src/spawn/sandbox.js";
import { refusal } from "../helpers/sandbox-refusal.js";

const root = mkdtempSync(join(tmpdir(), "exactspawn-sandbox-options-"));
const work = join(root, "work");
const bin = join(root, "bin");
mkdirSync(work);
mkdirSync(bin);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const full = supportFrom({ landlockAbi: 7, seccompFilter: true });

function sandbox(value: unknown) {
  const normalized = normalizeSandbox("spawn", value);
  if (normalized === undefined) throw new Error("expected a sandbox");
  return normalized;
}

describe("sandbox option validation", () => {
  it.each([
    [null, /must be an object/],
    [[], /must be an object/],
    [{}, /writable must be an array/],
    [{ writable: "/tmp" }, /writable must be an array/],
    [{ writable: [""] }, /writable\[0\] must be a non-empty path/],
    [{ writable: ["/a\0b"] }, /writable\[0\]/],
    [{ writable: [], readable: "some" }, /readable must be an array/],
    [{ writable: [], network: "no" }, /network must be a boolean/],
    [{ writable: [], executeWritable: 1 }, /executeWritable must be a boolean/],
    [{ writable: [], allowWeaker: ["everything"] }, /allowWeaker has an unknown part/],
    [{ writable: [], keepCapabilities: "yes" }, /keepCapabilities must be a boolean/],
    [{ writable: [], readOnlyView: "no" }, /readOnlyView must be a boolean/],
    [{ writable: [], writeable: [] }, /unknown field: writeable/],
  ])("refuses %j with a TypeError naming the field", (value, pattern) => {
    expect(() => normalizeSandbox("spawn", value)).toThrow(TypeError);
    expect(() => normalizeSandbox("spawn", value)).toThrow(pattern);
  });

  it("makes paths absolute and applies the defaults", () => {
    expect(sandbox({ writable: ["rel"] })).toMatchObject({
      writable: [join(process.cwd(), "rel")],
      readable: "all",
      executable: undefined,
      executeWritable: false,
      network: false,
      readOnlyView: true,
    });
  });
});

describe("the read-only mount view", () => {
  it.each([
    [{ landlockAbi: 7, seccompFilter: true, readOnlyView: "available" as const }, true, undefined],
    [
      { landlockAbi: 7, seccompFilter: true, readOnlyView: "privilege" as const },
      false,
      "privilege",
    ],
    [
      { landlockAbi: 7, seccompFilter: true, readOnlyView: "user-namespace" as const },
      true,
      undefined,
    ],
    [{ landlockAbi: 7, seccompFilter: true, readOnlyView: "kernel" as const }, false, "kernel"],
    [{ landlockAbi: 7, seccompFilter: true }, false, "kernel"], // an addon older than the view
    [undefined, false, "engine"],
  ])("support %j: readOnlyView %s, unavailable %s", (raw, available, why) => {
    expect(supportFrom(raw)).toMatchObject({
      readOnlyView: available,
      readOnlyViewUnavailable: why,
    });
  });

  it("is made where the host can, unless the sandbox says readOnlyView: false", () => {
    const can = supportFrom({ landlockAbi: 7, seccompFilter: true, readOnlyView: "available" });
    const cannot = supportFrom({ landlockAbi: 7, seccompFilter: true, readOnlyView: "privilege" });
    expect(resolveSandbox(sandbox({ writable: [work] }), can).readOnlyView).toBe(true);
    expect(resolveSandbox(sandbox({ writable: [work] }), cannot).readOnlyView).toBe(false);
    const off = sandbox({ writable: [work], readOnlyView: false });
    expect(resolveSandbox(off, can).readOnlyView).toBe(false);
  });

  it("takes a user namespace where the host is not root, and then not with credential changes", () => {
    const userns = supportFrom({
      landlockAbi: 7,
      seccompFilter: true,
      readOnlyView: "user-namespace",
    });
    const can = supportFrom({ landlockAbi: 7, seccompFilter: true, readOnlyView: "available" });
    expect(userns.readOnlyViewUserNamespace).toBe(true);
    expect(resolveSandbox(sandbox({ writable: [work] }), userns)).toMatchObject({
      readOnlyView: true,
      userNamespace: true,
    });
    expect(resolveSandbox(sandbox({ writable: [work] }), userns, true).readOnlyView).toBe(false);
    expect(resolveSandbox(sandbox({ writable: [work] }), can, true)).toMatchObject({
      readOnlyView: true,
      userNamespace: false,
    });
  });
});

describe("sandbox resolution", () => {
  it("resolves real paths and takes the host's executable directories", () => {
    const raw = resolveSandbox(sandbox({ writable: [work], executable: [bin] }), full);
    expect(raw).toMatchObject({
      readAll: true,
      write: [work],
      exec: [bin],
      network: false,
      landlock: true,
      seccomp: true,
      dropCapabilities: true,
    });
    const kept = resolveSandbox(sandbox({ writable: [work], keepCapabilities: true }), full);
    expect(kept.dropCapabilities).toBe(false);
  });

  it("refuses a writable directory that overlaps an executable one, unless asked", () => {
    const error = refusal(() =>
      resolveSandbox(sandbox({ writable: [work], executable: [root] }), full),
    );
    expect(error.code).toBe("ERR_EXACTSPAWN_SANDBOX_CONFLICT");
    expect(() =>
      resolveSandbox(
        sandbox({ writable: [work], executable: [root], executeWritable: true }),
        full,
      ),
    ).not.toThrow();
  });

  it("names a missing path with its system error", () => {
    expect(() => resolveSandbox(sandbox({ writable: [join(root, "nope")] }), full)).toThrow(
      expect.objectContaining({ code: "ENOENT" }),
    );
  });

  // Breaking the control (dropping the `refused` check) lets every case below
  // start with less than asked: seen red.
  it.each([
    [{ landlockAbi: 0, seccompFilter: true }, ["filesystem"]],
    [{ landlockAbi: 2, seccompFilter: true }, ["truncate", "ioctl"]],
    [{ landlockAbi: 4, seccompFilter: true }, ["ioctl"]],
    [{ landlockAbi: 7, seccompFilter: false }, ["network", "syscalls"]],
  ])("fails closed on a kernel reporting %j", (raw, missing) => {
    const support = supportFrom(raw);
    const error = refusal(() => resolveSandbox(sandbox({ writable: [work] }), support));
    expect(error.code).toBe("ERR_EXACTSPAWN_SANDBOX_UNAVAILABLE");
    expect(error.missing).toEqual(missing);
    const accepted = resolveSandbox(sandbox({ writable: [work], allowWeaker: missing }), support);
    expect(accepted.landlock).toBe(raw.landlockAbi >= 1);
    expect(accepted.seccomp).toBe(raw.seccompFilter);
  });

  it("installs the filter whatever the network says; without seccomp only syscalls is missing", () => {
    expect(resolveSandbox(sandbox({ writable: [], network: true }), full).seccomp).toBe(true);
    const support = supportFrom({ landlockAbi: 7, seccompFilter: false });
    const error = refusal(() => resolveSandbox(sandbox({ writable: [], network: true }), support));
    expect(error.missing).toEqual(["syscalls"]);
    const weaker = sandbox({ writable: [], network: true, allowWeaker: ["syscalls"] });
    expect(resolveSandbox(weaker, support).seccomp).toBe(false);
  });

  it("refuses every sandbox without the native engine", () => {
    const error = refusal(() =>
      resolveSandbox(
        sandbox({ writable: [], allowWeaker: ["filesystem", "network", "syscalls"] }),
        supportFrom(undefined),
      ),
    );
    expect(error.code).toBe("ERR_EXACTSPAWN_SANDBOX_UNAVAILABLE");
  });
});
