import { describe, expect, it } from "vitest";
import {
  ESSENTIAL_ENV_NAMES,
  ESSENTIAL_ENV_PREFIXES,
  inheritedBase,
  isEssentialName,
  snapshotEnv,
} from "../../src/env/inherited.js";
import { InvalidEnvError } from "../../src/errors.js";
import { MAX_ARG_STRLEN } from "../../src/limits.js";
import { captureLog } from "../helpers/capture-log.js";

const SENTINEL = "SENTINEL-7f3a";
const quiet = { logger: false } as const;

const parent = snapshotEnv({
  PATH: "/usr/bin",
  HOME: "/home/u",
  USER: "u",
  LOGNAME: "u",
  SHELL: "/bin/bash",
  LANG: "C.UTF-8",
  LANGUAGE: "en",
  TZ: "UTC",
  TMPDIR: "/tmp",
  TMP: "/tmp",
  TEMP: "/tmp",
  LC_ALL: "C",
  LC_TIME: "C",
  XDG_RUNTIME_DIR: "/run/user/1",
  HOST_SERVICE_TOKEN: SENTINEL,
  ANTHROPIC_API_KEY: SENTINEL,
  NODE_EXTRA_CA_CERTS: "/ca.pem",
  EDITOR: "vi",
  EXACTSPAWN_AUTH_XAI_API_KEY: SENTINEL,
});
const essentials = [
  "HOME",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_TIME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TEMP",
  "TMP",
  "TMPDIR",
  "TZ",
  "USER",
  "XDG_RUNTIME_DIR",
];
const names = (env: ReadonlyMap<string, string>) => [...env.keys()].sort();

describe("essentials", () => {
  it("are the Linux set the overlay seed lists", () => {
    expect(ESSENTIAL_ENV_NAMES).toEqual([
      "PATH",
      "HOME",
      "USER",
      "LOGNAME",
      "SHELL",
      "LANG",
      "LANGUAGE",
      "TZ",
      "TMPDIR",
      "TMP",
      "TEMP",
    ]);
    expect(ESSENTIAL_ENV_PREFIXES).toEqual(["LC_", "XDG_"]);
  });

  it.each([
    ["PATH", true],
    ["LC_CTYPE", true],
    ["XDG_DATA_HOME", true],
    ["EDITOR", false],
    ["path", false],
  ])("isEssentialName(%s) = %s", (name, essential) => {
    expect(isEssentialName(name)).toBe(essential);
  });
  it("matches case-insensitively when asked", () => {
    expect(isEssentialName("Path", true)).toBe(true);
    expect(isEssentialName("lc_all", true)).toBe(true);
  });
});

describe("inheritedBase: allow and block lists", () => {
  it("inherits everything with neither list", () => {
    const base = inheritedBase(parent, quiet);
    expect(names(base.env)).toEqual(names(parent));
    expect(base.dropped).toEqual([]);
  });

  it("an allow list keeps essentials plus the listed names", () => {
    const base = inheritedBase(parent, {
      allow: ["ANTHROPIC_API_KEY", "NODE_EXTRA_CA_CERTS"],
      ...quiet,
    });
    expect(names(base.env)).toEqual(
      [...essentials, "ANTHROPIC_API_KEY", "NODE_EXTRA_CA_CERTS"].sort(),
    );
    expect(base.dropped.map((d) => [d.name, d.reason])).toEqual([
      ["HOST_SERVICE_TOKEN", "not_allowed"],
      ["EDITOR", "not_allowed"],
      ["EXACTSPAWN_AUTH_XAI_API_KEY", "not_allowed"],
    ]);
  });

  it("an empty allow list keeps only the essentials", () => {
    expect(names(inheritedBase(parent, { allow: [], ...quiet }).env)).toEqual(essentials);
  });

  it("a block list removes names", () => {
    const base = inheritedBase(parent, { block: ["HOST_SERVICE_TOKEN"], ...quiet });
    expect(base.env.has("HOST_SERVICE_TOKEN")).toBe(false);
    expect(base.dropped).toEqual([
      { name: "HOST_SERVICE_TOKEN", reason: "blocked", bytes: 19 + SENTINEL.length + 1 },
    ]);
  });

  it("the block list applies after the allow list: a name on both is not inherited", () => {
    const base = inheritedBase(parent, {
      allow: ["ANTHROPIC_API_KEY"],
      block: ["ANTHROPIC_API_KEY"],
      ...quiet,
    });
    expect(base.env.has("ANTHROPIC_API_KEY")).toBe(false);
  });

  it("the block list can remove an essential", () => {
    expect(inheritedBase(parent, { block: ["TZ"], ...quiet }).env.has("TZ")).toBe(false);
  });

  it("grants pass both lists", () => {
    const base = inheritedBase(parent, {
      allow: [],
      block: ["ANTHROPIC_API_KEY"],
      grants: ["ANTHROPIC_API_KEY"],
      grantPrefixes: ["EXACTSPAWN_AUTH_"],
      ...quiet,
    });
    expect(base.env.get("ANTHROPIC_API_KEY")).toBe(SENTINEL);
    expect(base.env.get("EXACTSPAWN_AUTH_XAI_API_KEY")).toBe(SENTINEL);
  });

  it("case-insensitive lists match names in any ASCII case", () => {
    const windows = snapshotEnv({ Path: "C:\\bin", SystemRoot: "C:\\Windows", Token: "t" });
    const base = inheritedBase(windows, {
      allow: ["SYSTEMROOT"],
      block: ["TOKEN"],
      caseInsensitive: true,
      ...quiet,
    });
    expect(names(base.env)).toEqual(["Path", "SystemRoot"]);
  });

  it.each([
    [{ allow: "PATH" }, "allow must be an array of names"],
    [{ allow: [""] }, "allow[0] must be a non-empty string"],
    [{ block: ["A", 1] }, "block[1] must be a non-empty string"],
    [{ block: [`A=${SENTINEL}`] }, "block[0] must not contain '=' or NUL"],
    [{ grants: [`A\0${SENTINEL}`] }, "grants[0] must not contain '=' or NUL"],
  ])("rejects %j with a TypeError that echoes no entry", (options, message) => {
    let error: unknown;
    try {
      inheritedBase(parent, options as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(message);
    expect((error as Error).message).not.toContain(SENTINEL);
  });
});

describe("inheritedBase: per-string filter", () => {
  const ofSize = (name: string, bytes: number) => "x".repeat(bytes - name.length - 2);

  it("keeps exactly MAX_ARG_STRLEN, drops MAX_ARG_STRLEN + 1, warns name and size", () => {
    const log = captureLog();
    const env = snapshotEnv({
      FITS: ofSize("FITS", MAX_ARG_STRLEN),
      HUGE: ofSize("HUGE", MAX_ARG_STRLEN + 1),
    });
    const base = inheritedBase(env, { logger: log.logger });
    expect(base.env.has("FITS")).toBe(true);
    expect(base.env.has("HUGE")).toBe(false);
    expect(base.dropped).toEqual([
      { name: "HUGE", reason: "too_large", bytes: MAX_ARG_STRLEN + 1 },
    ]);
    const [event, ...rest] = log.events();
    expect(rest).toEqual([]);
    expect(event).toMatchObject({ level: 40, variable: "HUGE", bytes: MAX_ARG_STRLEN + 1 });
    expect(log.lines.join("")).not.toContain("xxxx");
  });

  it("measures UTF-8 bytes", () => {
    const value = "é".repeat(MAX_ARG_STRLEN / 2);
    const base = inheritedBase(snapshotEnv({ A: value }), quiet);
    expect(base.dropped.map((d) => d.reason)).toEqual(["too_large"]);
  });

  it("applies to grants too", () => {
    const env = snapshotEnv({ KEY: ofSize("KEY", MAX_ARG_STRLEN + 1) });
    expect(inheritedBase(env, { grants: ["KEY"], ...quiet }).env.has("KEY")).toBe(false);
  });
});

describe("snapshotEnv", () => {
  it("copies: later changes to the source have no effect", () => {
    const source: Record<string, string> = { A: "1" };
    const snapshot = snapshotEnv(source);
    source["A"] = "2";
    source["B"] = "3";
    expect([...snapshot]).toEqual([["A", "1"]]);
    expect(() => (snapshot as Map<string, string>).set("C", "x")).toThrow(TypeError);
  });

  it("treats __proto__ and constructor as ordinary names", () => {
    const source = JSON.parse('{"__proto__": "p", "constructor": "c"}') as Record<string, string>;
    expect([...snapshotEnv(source)]).toEqual([
      ["__proto__", "p"],
      ["constructor", "c"],
    ]);
  });

  it("rejects unrepresentable entries without echoing values", () => {
    for (const bad of [{ A: `${SENTINEL}\0` }, { A: 1 }, { "A=B": SENTINEL }, { A: "\uD800" }]) {
      let error: unknown;
      try {
        snapshotEnv(bad);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(InvalidEnvError);
      expect((error as Error).message).not.toContain(SENTINEL);
    }
  });
});
