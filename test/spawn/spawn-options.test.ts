import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { normalizeOptions } from "../../src/spawn/spawn-options.js";
import { engineRequest, spawnInput } from "../../src/spawn/spawn-request.js";

describe("normalizeOptions", () => {
  it("searches the parent's PATH for a bare file when no path is given", () => {
    // The oracle is the shell's own PATH search in a child given the same PATH.
    const expected = execFileSync("/bin/sh", ["-c", "command -v sh"], {
      encoding: "utf8",
      env: { PATH: process.env["PATH"] },
    }).trim();
    expect(engineRequest(spawnInput("spawn", "sh", [], {}), undefined).file).toBe(expected);
    expect(
      engineRequest(spawnInput("spawn", "sh", [], { path: "/nowhere:/bin" }), undefined).file,
    ).toBe("/bin/sh");
  });

  it("applies the documented defaults", () => {
    const o = normalizeOptions(undefined);
    expect(o.env).toEqual({});
    // No path option: the parent's PATH, read when a search needs it (engineRequest).
    expect(o.path).toBeUndefined();
    expect(o.stdio).toEqual(["ignore", "pipe", "pipe"]);
    expect(o).toMatchObject({
      encoding: "utf8",
      buffer: true,
      reject: true,
      ref: true,
      setsid: false,
      processGroup: false,
      cleanup: false,
      killSignal: 15,
      killGraceMs: 2000,
    });
  });

  it("puts timed and abortable children in their own process group", () => {
    expect(normalizeOptions({ timeout: 10 }).processGroup).toBe(true);
    expect(normalizeOptions({ signal: new AbortController().signal }).processGroup).toBe(true);
    expect(normalizeOptions({ timeout: 10, setsid: true }).processGroup).toBe(false);
    expect(normalizeOptions({ timeout: 10, processGroup: false }).processGroup).toBe(false);
  });

  it("cleanup puts the child in a group of its own, and refuses to run without one", () => {
    expect(normalizeOptions({ cleanup: true })).toMatchObject({
      cleanup: true,
      processGroup: true,
    });
    expect(normalizeOptions({ cleanup: true, setsid: true })).toMatchObject({
      cleanup: true,
      setsid: true,
      processGroup: false,
    });
    expect(() => normalizeOptions({ cleanup: true, processGroup: false })).toThrow(
      /cleanup needs a process group/,
    );
    expect(() => normalizeOptions({ cleanup: "yes" as unknown as boolean })).toThrow(
      /options\.cleanup must be a boolean/,
    );
  });

  it("makes stdin a pipe when input is given", () => {
    expect(normalizeOptions({ input: "x" }).stdio).toEqual(["pipe", "pipe", "pipe"]);
    expect(normalizeOptions({ input: "x", stdio: "ignore" }).stdio[0]).toBe("pipe");
    expect(() => normalizeOptions({ input: "x", stdio: ["inherit", "pipe", "pipe"] })).toThrow(
      TypeError,
    );
  });

  it("expands a single stdio value and pads short arrays with ignore", () => {
    expect(normalizeOptions({ stdio: "inherit" }).stdio).toEqual(["inherit", "inherit", "inherit"]);
    expect(normalizeOptions({ stdio: [5] }).stdio).toEqual([5, "ignore", "ignore"]);
  });

  it.each([
    [{ stdio: ["bogus"] }],
    [{ stdio: [-1] }],
    [{ stdio: [1.5] }],
    [{ timeout: -1 }],
    [{ timeout: "10" }],
    [{ killSignal: "SIGNOPE" }],
    [{ encoding: "nope" }],
    [{ maxBuffer: 0 }],
    [{ reject: "yes" }],
    [{ cwd: "" }],
    [{ path: 1 }],
    [{ signal: {} }],
    [{ input: 5 }],
  ])("rejects %j with a TypeError (no coercion)", (options) => {
    expect(() => normalizeOptions(options as never)).toThrow(TypeError);
  });
});
