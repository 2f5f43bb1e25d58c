/**
 * Strict inputs on every public entry point: an unknown option is a TypeError
 * naming it, a wrong-typed value throws instead of being coerced, NUL in the
 * program name, cwd or search path throws synchronously. Every case throws
 * before an engine is reached, so no child is started. The option lists are
 * checked against the reference tables in docs/ (an oracle outside the code):
 * a key the code accepts but the docs do not describe, or the reverse, fails.
 */
import { Buffer } from "node:buffer";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { assertKnownOptions, knownKeys } from "../src/known-options.js";
import { BUILD_ENV_OPTION_KEYS, createRuntime, RUNTIME_OPTION_KEYS } from "../src/runtime.js";
import { spawn } from "../src/spawn/spawn.js";
import { normalizeOptions, SPAWN_OPTION_KEYS } from "../src/spawn/spawn-options.js";

/** Every backticked name in the first column of the table under `heading` in a doc page. */
function documentedOptions(page: string, heading: string): Set<string> {
  const text = readFileSync(new URL(`../docs/${page}`, import.meta.url), "utf8");
  const start = text.indexOf(heading);
  expect(start).toBeGreaterThanOrEqual(0);
  const names = new Set<string>();
  let inTable = false;
  for (const line of text.slice(start).split("\n").slice(1)) {
    if (line.startsWith("|")) {
      inTable = true;
      // A row may document several options: "| `uid`, `gid`, … | …".
      const first = line.split("|")[1] ?? "";
      for (const match of first.matchAll(/`([A-Za-z0-9]+)`/g)) names.add(match[1]!);
    } else if (inTable) break;
  }
  return names;
}

const UNKNOWN = ["shell", "detached", "envv", "windowsHide"];

describe("assertKnownOptions", () => {
  const known = knownKeys<{ a?: number; b?: string }>({ a: true, b: true });

  it("accepts known keys, present or not", () => {
    expect(() => assertKnownOptions({}, known, "f")).not.toThrow();
    expect(() => assertKnownOptions({ a: 1, b: undefined }, known, "f")).not.toThrow();
  });

  it("names the first unknown key, even one whose value is undefined", () => {
    expect(() => assertKnownOptions({ a: 1, c: undefined }, known, "f")).toThrow(
      new TypeError('f: unknown option "c"'),
    );
  });

  it("treats an own __proto__ key as an unknown option, and escapes control characters", () => {
    expect(() => assertKnownOptions(JSON.parse('{"__proto__": 1}'), known, "f")).toThrow(
      '"__proto__"',
    );
    expect(() => assertKnownOptions({ "x\ny": 1 }, known, "f")).toThrow('"x\\ny"');
  });
});

describe("spawn", () => {
  it("knows exactly the options docs/spawn.md describes", () => {
    expect(new Set(SPAWN_OPTION_KEYS)).toEqual(documentedOptions("spawn.md", "## Options"));
  });

  it.each(UNKNOWN)("throws a TypeError naming %s, synchronously", (key) => {
    const call = () => spawn("/bin/true", [], { [key]: true } as never);
    expect(call).toThrow(TypeError);
    expect(call).toThrow(`spawn: unknown option "${key}"`);
  });

  it.each([
    ["a NUL in an absolute file", () => spawn("/bin/tr\0ue")],
    ["a NUL in a bare file", () => spawn("tr\0ue")],
    ["a NUL in cwd", () => spawn("/bin/true", [], { cwd: "/tm\0p" })],
    ["a NUL in path", () => spawn("true", [], { path: "/bin\0:/usr/bin" })],
    ["a non-string file", () => spawn(5 as never)],
  ])("throws a TypeError for %s before anything starts", (_, call) => {
    expect(call).toThrow(TypeError);
  });

  it("takes any Uint8Array as input, viewed as a Buffer with the same bytes", () => {
    const bytes = new Uint8Array([9, 1, 2, 255, 9]).subarray(1, 4);
    const input = normalizeOptions({ input: bytes }).input;
    expect(Buffer.isBuffer(input)).toBe(true);
    expect(input).toEqual(Buffer.from([1, 2, 255]));
    expect(() => normalizeOptions({ input: new Uint16Array(2) as never })).toThrow(TypeError);
  });
});

describe("createRuntime", () => {
  const parentEnv = { PATH: "/usr/bin:/bin" };

  it("knows exactly the options docs/runtime.md describes", () => {
    expect(new Set(RUNTIME_OPTION_KEYS)).toEqual(documentedOptions("runtime.md", "## Options"));
  });

  it.each(UNKNOWN)("throws a TypeError naming %s", (key) => {
    const call = () => createRuntime({ parentEnv, [key]: true } as never);
    expect(call).toThrow(TypeError);
    expect(call).toThrow(`createRuntime: unknown option "${key}"`);
  });

  it.each([
    [{ denylist: "LD_" }, "options.denylist must be an object"],
    [{ denylist: { name: ["X"] } }, 'options.denylist: unknown option "name"'],
    [{ protected: { prefix: ["X_"] } }, 'options.protected: unknown option "prefix"'],
    [{ protected: [] }, "options.protected must be an object"],
    [{ caseInsensitive: "yes" }, "options.caseInsensitive must be a boolean"],
    [{ logger: {} }, "options.logger must be a pino logger"],
    [null, "options must be an object"],
  ])("rejects %j", (options, message) => {
    const given = options === null ? null : { parentEnv, ...options };
    expect(() => createRuntime(given as never)).toThrow(message);
  });
});

describe("runtime.spawn and runtime.bash", () => {
  const runtime = createRuntime({ parentEnv: { PATH: "/usr/bin:/bin" } });

  it("buildEnv knows exactly the options docs/runtime.md describes, and no other", () => {
    expect(new Set(BUILD_ENV_OPTION_KEYS)).toEqual(
      documentedOptions("runtime.md", "## `runtime.buildEnv(options?)`"),
    );
    expect(() => runtime.buildEnv({ values: {} } as never)).toThrow(
      new TypeError('buildEnv: unknown option "values"'),
    );
  });

  // The error also carries the call's step identity (step, correlationId): matched by class and message.
  it.each([...UNKNOWN, "env", "path"])("runtime.spawn throws a TypeError naming %s", (key) => {
    const call = () => runtime.spawn("/bin/true", [], { [key]: {} } as never);
    expect(call).toThrow(TypeError);
    expect(call).toThrow(`runtime.spawn: unknown option "${key}"`);
  });

  it("runtime.spawn checks onTrim and limits", () => {
    expect(() => runtime.spawn("/bin/true", [], { onTrim: 1 } as never)).toThrow(TypeError);
    expect(() => runtime.spawn("/bin/true", [], { limits: {} } as never)).toThrow(TypeError);
  });

  it.each(UNKNOWN)("runtime.bash throws a TypeError naming %s", (key) => {
    // Thrown synchronously, like spawn's (docs/spawn.md, "Errors").
    const call = () => runtime.bash("true", { [key]: true } as never);
    expect(call).toThrow(TypeError);
    expect(call).toThrow(`bash: unknown option "${key}"`);
  });

  it.each([
    [{ values: "nope" }, "options.values must be a record or a Map"],
    [{ values: ["a", "b"] }, "options.values must be a record or a Map"],
    [{ values: null }, "options.values must be a record or a Map"],
    [{ cwd: 5 }, "options.cwd must be a non-empty string"],
    [{ tmpdir: "" }, "options.tmpdir must be a non-empty string"],
    [{ step: {} }, "options.step must be a non-empty string"],
    [{ limits: { execLimit: "big", maxArgStrlen: 1 } }, "options.limits must have"],
  ])("planBash throws for %j", (options, message) => {
    expect(() => runtime.planBash("true", options as never)).toThrow(message);
  });

  it("still plans a step from a record or a Map of values", () => {
    const names = (values: unknown) =>
      runtime.planBash("true", { values } as never).spill.inline.keys();
    expect([...names({ a: "1" })]).toContain("RECIPE_VAR_a");
    expect([...names(new Map([["a", "1"]]))]).toContain("RECIPE_VAR_a");
  });
});
