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

describe("normalizeOptions: the same frozen options object", () => {
  it("gives the same frozen result again, and the same result for no options", () => {
    const options = Object.freeze({ stdio: "ignore", timeout: 50, env: { A: "1" } } as const);
    const first = normalizeOptions(options);
    expect(Object.isFrozen(first)).toBe(true);
    expect(normalizeOptions(options)).toBe(first);
    expect(normalizeOptions(undefined)).toBe(normalizeOptions(undefined));
    const list = Object.freeze({ stdio: Object.freeze(["ignore", "pipe", 2] as const) });
    expect(normalizeOptions(list)).toBe(normalizeOptions(list));
    expect(normalizeOptions(list).stdio).toEqual(["ignore", "pipe", 2]);
  });

  it("reads a mutable options object afresh every time", () => {
    const options: { timeout?: number } = { timeout: 50 };
    expect(normalizeOptions(options).timeout).toBe(50);
    options.timeout = 70;
    expect(normalizeOptions(options).timeout).toBe(70);
  });

  it("reads afresh a frozen object that holds something that can change", () => {
    let reads = 0;
    const withGetter = Object.freeze(
      Object.defineProperty({}, "timeout", { enumerable: true, get: () => 10 + reads++ }),
    );
    expect(normalizeOptions(withGetter).timeout).toBe(10);
    expect(normalizeOptions(withGetter).timeout).toBe(11);

    const stdio: ("ignore" | "pipe")[] = ["ignore", "ignore", "ignore"];
    const mutableList = Object.freeze({ stdio });
    expect(normalizeOptions(mutableList).stdio).toEqual(["ignore", "ignore", "ignore"]);
    stdio[1] = "pipe";
    expect(normalizeOptions(mutableList).stdio).toEqual(["ignore", "pipe", "ignore"]);

    const inherited = Object.freeze(Object.create({ timeout: 5 }) as object);
    const first = normalizeOptions(inherited as never);
    expect(normalizeOptions(inherited as never)).not.toBe(first);

    const signal = Object.freeze({ signal: new AbortController().signal });
    expect(normalizeOptions(signal)).not.toBe(normalizeOptions(signal));
    const input = Object.freeze({ input: Buffer.from("x") });
    expect(normalizeOptions(input)).not.toBe(normalizeOptions(input));
    const uid = Object.freeze({ uid: process.getuid?.() ?? 0 });
    expect(normalizeOptions(uid)).not.toBe(normalizeOptions(uid));
  });

  it("hands out stdio lists nothing can change", () => {
    for (const options of [undefined, { stdio: "ignore" as const }, { stdio: ["pipe" as const] }]) {
      const stdio = normalizeOptions(options).stdio;
      expect(Object.isFrozen(stdio)).toBe(true);
    }
    expect(normalizeOptions({ stdio: ["pipe"] }).stdio).toEqual(["pipe", "ignore", "ignore"]);
    expect(normalizeOptions({ stdio: "ignore", input: "x" }).stdio).toEqual([
      "pipe",
      "ignore",
      "ignore",
    ]);
    expect(() => normalizeOptions({ stdio: "inherit", input: "x" })).toThrow(
      "options.input needs stdin to be a pipe",
    );
  });
});
