import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ContextExport,
  contextEnvPairs,
  createContextExporter,
} from "../../src/env/context-export.js";
import { isReservedName } from "../../src/env/denylist.js";
import { PER_VALUE_ENV_CAP } from "../../src/limits.js";
import { setLogger } from "../../src/log.js";
import { captureLog } from "../helpers/capture-log.js";

// Most of this file pins the rules of bare export (the upstream behaviour, the
// compat preset's mode); the default namespace mode has its own block.
const quiet = { mode: "bare", logger: false } as const;
const pairs = (out: ContextExport) => Object.fromEntries(out.pairs);
const reasons = (out: ContextExport) => out.skipped.map(({ key, reason }) => [key, reason]);

describe("contextEnvPairs: names", () => {
  it.each([
    ["task_description", "TASK_DESCRIPTION"],
    ["repo_path", "REPO_PATH"],
    ["issue_number", "ISSUE_NUMBER"],
    ["branch_name", "BRANCH_NAME"],
    ["target_path", "TARGET_PATH"],
    ["Mixed_Case9", "MIXED_CASE9"],
    ["_private", "_PRIVATE"],
    ["__proto__", "__PROTO__"],
    ["constructor", "CONSTRUCTOR"],
    ["toString", "TOSTRING"],
  ])("%s → %s", (key, name) => {
    const out = contextEnvPairs({ [key]: "v" }, quiet);
    expect(out.pairs).toEqual([[name, "v"]]);
    expect(out.skipped).toEqual([]);
  });

  it("reads __proto__ as an own key, not the prototype", () => {
    const context = JSON.parse('{"__proto__": "x", "constructor": "y"}') as Record<string, unknown>;
    expect(pairs(contextEnvPairs(context, quiet))).toEqual({ __PROTO__: "x", CONSTRUCTOR: "y" });
  });

  it.each([
    ["issue title", "ISSUE TITLE"],
    ["", ""],
    ["9lives", "9LIVES"],
    ["a.b", "A.B"],
    ["a-b", "A-B"],
    ["a=b", "A=B"],
    ["café", "CAFé"],
    ["ſ", "ſ"], // would upper-case to S outside ASCII; left alone and rejected
    ["ı", "ı"],
    ["\u212A", "\u212A"], // Kelvin sign: upper-cases to K outside ASCII; left alone
  ])("%j → invalid_identifier (name %j)", (key, name) => {
    const out = contextEnvPairs({ [key]: "v" }, quiet);
    expect(out.pairs).toEqual([]);
    expect(out.skipped).toEqual([{ key, name, reason: "invalid_identifier" }]);
  });

  it.each([
    ["ld_preload", "LD_PRELOAD"],
    ["LD_PRELOAD", "LD_PRELOAD"],
    ["path", "PATH"],
    ["home", "HOME"],
    ["bash_env", "BASH_ENV"],
    ["ps4", "PS4"],
    ["ifs", "IFS"],
    ["exactspawn_run_id", "EXACTSPAWN_RUN_ID"],
    ["recipe_var_x", "RECIPE_VAR_X"],
    ["http_proxy", "HTTP_PROXY"],
    ["git_dir", "GIT_DIR"],
  ])("%s → reserved_name", (key, name) => {
    const out = contextEnvPairs({ [key]: "/evil" }, quiet);
    expect(out.pairs).toEqual([]);
    expect(out.skipped).toEqual([{ key, name, reason: "reserved_name" }]);
  });
});

describe("contextEnvPairs: values", () => {
  it("exports strings unchanged, including empty, unicode and newlines", () => {
    const value = "line 1\nline 2 — ünïcødé 🎉 $(not run) `x` 'q' \"d\"";
    expect(pairs(contextEnvPairs({ a: value, b: "" }, quiet))).toEqual({ A: value, B: "" });
  });

  it("exports finite numbers, booleans and bigints as String(value)", () => {
    expect(pairs(contextEnvPairs({ n: 42, f: 1.5, t: true, no: false, big: 10n }, quiet))).toEqual({
      N: "42",
      F: "1.5",
      T: "true",
      NO: "false",
      BIG: "10",
    });
  });

  it.each([
    ["null", null],
    ["undefined", undefined],
    ["object", { a: 1 }],
    ["array", ["a"]],
    ["function", () => 1],
    ["symbol", Symbol("s")],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["lone surrogate", "a\uD800b"],
  ])("skips %s as unsupported_value", (_label, value) => {
    const out = contextEnvPairs({ notes: value }, quiet);
    expect(out.pairs).toEqual([]);
    expect(reasons(out)).toEqual([["notes", "unsupported_value"]]);
  });

  it("never runs a getter", () => {
    let ran = false;
    const context = {
      get notes() {
        ran = true;
        return "x";
      },
    };
    expect(reasons(contextEnvPairs(context, quiet))).toEqual([["notes", "unsupported_value"]]);
    expect(ran).toBe(false);
  });

  it.each([
    ["notes", "() { :; }; echo pwned"],
    ["lang", "../../../tmp/x"],
    ["lc_all", "/tmp/locale"],
    ["tz", "/etc/passwd"],
  ])("%s with a hostile value → unsafe_value", (key, value) => {
    expect(reasons(contextEnvPairs({ [key]: value }, quiet))).toEqual([[key, "unsafe_value"]]);
  });

  it("allows safe locale and zone values", () => {
    expect(pairs(contextEnvPairs({ lang: "C.UTF-8", tz: "UTC" }, quiet))).toEqual({
      LANG: "C.UTF-8",
      TZ: "UTC",
    });
  });

  it("NUL → value_contains_nul", () => {
    expect(reasons(contextEnvPairs({ notes: "a\0b" }, quiet))).toEqual([
      ["notes", "value_contains_nul"],
    ]);
  });

  it("value_too_large at exactly one byte over PER_VALUE_ENV_CAP (NAME=value\\0)", () => {
    const fits = "x".repeat(PER_VALUE_ENV_CAP - "BIG".length - 2);
    expect(pairs(contextEnvPairs({ big: fits }, quiet))).toEqual({ BIG: fits });
    expect(reasons(contextEnvPairs({ big: `${fits}x` }, quiet))).toEqual([
      ["big", "value_too_large"],
    ]);
    // Measured in UTF-8 bytes, not UTF-16 units: "é" is two bytes.
    const wide = "é".repeat((PER_VALUE_ENV_CAP - "BIG".length - 2) / 2 + 1);
    expect(reasons(contextEnvPairs({ big: wide }, quiet))).toEqual([["big", "value_too_large"]]);
  });

  it("checks in the order identifier, reserved, unsafe, NUL, size: first failure wins", () => {
    const huge = `() {\0${"x".repeat(PER_VALUE_ENV_CAP)}`;
    const out = contextEnvPairs(
      {
        "bad key": huge,
        ld_preload: huge,
        notes: huge,
        memo: `\0${"x".repeat(PER_VALUE_ENV_CAP)}`,
      },
      quiet,
    );
    expect(reasons(out)).toEqual([
      ["bad key", "invalid_identifier"],
      ["ld_preload", "reserved_name"],
      ["memo", "value_contains_nul"],
      ["notes", "unsafe_value"],
    ]);
  });
});

describe("contextEnvPairs: order and collisions", () => {
  it("repo_path vs REPO_PATH: sorted by code unit, the later key wins", () => {
    // "REPO_PATH" < "repo_path" in code-unit order, so repo_path is written last.
    const out = contextEnvPairs({ repo_path: "lower", REPO_PATH: "upper" }, quiet);
    expect(out.pairs).toEqual([["REPO_PATH", "lower"]]);
    expect(out.skipped).toEqual([{ key: "REPO_PATH", name: "REPO_PATH", reason: "superseded" }]);
    const reversed = contextEnvPairs(
      new Map([
        ["REPO_PATH", "upper"],
        ["repo_path", "lower"],
      ]),
      quiet,
    );
    expect(reversed).toEqual(out);
  });

  it("a later key that is skipped does not displace an exported one", () => {
    const out = contextEnvPairs({ NOTES: "ok", notes: "a\0b" }, quiet);
    expect(out.pairs).toEqual([["NOTES", "ok"]]);
    expect(reasons(out)).toEqual([["notes", "value_contains_nul"]]);
  });

  it("returns pairs sorted by name, whatever the insertion order", () => {
    const out = contextEnvPairs({ zeta: "1", alpha: "2", Mid: "3" }, quiet);
    expect(out.pairs.map(([name]) => name)).toEqual(["ALPHA", "MID", "ZETA"]);
  });

  it("is idempotent", () => {
    const context = { task_description: "t", "bad key": "x", ld_preload: "y", repo_path: "." };
    expect(contextEnvPairs(context, quiet)).toEqual(contextEnvPairs(context, quiet));
  });
});

describe("contextEnvPairs: accepted shapes", () => {
  it("accepts a Map; non-string Map keys are invalid identifiers", () => {
    const out = contextEnvPairs(
      new Map<unknown, unknown>([
        ["task_description", "t"],
        [1, "x"],
      ]),
      quiet,
    );
    expect(out.pairs).toEqual([["TASK_DESCRIPTION", "t"]]);
    expect(reasons(out)).toEqual([["[number]", "invalid_identifier"]]);
  });

  it("never runs a non-string Map key's code (toString, toPrimitive)", () => {
    // Broken once on purpose: with the key reported as String(key) again, the
    // toString below ran and this test went red; restored, green.
    const calls: string[] = [];
    const key = {
      toString() {
        calls.push("toString");
        throw new Error("toString ran");
      },
      [Symbol.toPrimitive]() {
        calls.push("toPrimitive");
        return "TASK_DESCRIPTION";
      },
    };
    const out = contextEnvPairs(new Map<unknown, unknown>([[key, "x"]]), quiet);
    expect(calls).toEqual([]);
    expect(out.pairs).toEqual([]);
    expect(reasons(out)).toEqual([["[object]", "invalid_identifier"]]);
  });

  it("accepts a Map from another realm", async () => {
    const { runInNewContext } = await import("node:vm");
    const foreign = runInNewContext('new Map([["repo_path", "."]])') as unknown;
    expect(contextEnvPairs(foreign, quiet).pairs).toEqual([["REPO_PATH", "."]]);
  });

  it.each([null, undefined, "string", 42, true, Symbol("s"), () => 1])(
    "treats %s as an empty context",
    (context) => {
      expect(contextEnvPairs(context, quiet)).toEqual({ pairs: [], skipped: [] });
    },
  );

  it("survives a Proxy whose traps throw, and a Map with a throwing iterator", () => {
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error("boom");
        },
      },
    );
    expect(contextEnvPairs(hostile, quiet)).toEqual({ pairs: [], skipped: [] });
    const descriptorTrap = new Proxy(
      { a: "1" },
      {
        getOwnPropertyDescriptor() {
          throw new Error("boom");
        },
      },
    );
    expect(() => contextEnvPairs(descriptorTrap, quiet)).not.toThrow();
    const map = new Map([["a", "1"]]);
    Object.defineProperty(map, Symbol.iterator, {
      value: () => {
        throw new Error("boom");
      },
    });
    expect(contextEnvPairs(map, quiet).pairs).toEqual([["A", "1"]]);
  });
});

describe("contextEnvPairs: modes", () => {
  it("namespace mode puts every name under one prefix", () => {
    const out = contextEnvPairs(
      { task_description: "t", ld_preload: "x", cflags: "-O2", "bad key": "y" },
      { mode: "namespace", namespace: "CTX_", logger: false },
    );
    expect(pairs(out)).toEqual({
      CTX_TASK_DESCRIPTION: "t",
      CTX_LD_PRELOAD: "x",
      CTX_CFLAGS: "-O2",
    });
    expect(reasons(out)).toEqual([["bad key", "invalid_identifier"]]);
  });

  it("namespace mode still checks values and host-prefix collisions", () => {
    const out = contextEnvPairs(
      { notes: "() { :; }", _run_id: "x" },
      { mode: "namespace", namespace: "EXACTSPAWN", logger: false },
    );
    expect(reasons(out)).toEqual([
      ["_run_id", "reserved_name"],
      ["notes", "unsafe_value"],
    ]);
  });

  it.each(["", "1X_", "A-B", "LD_", "EXACTSPAWN_", "GIT_"])(
    "rejects the namespace %j",
    (namespace) => {
      expect(() => createContextExporter({ mode: "namespace", namespace })).toThrow(TypeError);
    },
  );

  it("allowlist mode exports only listed names, bare", () => {
    const out = contextEnvPairs(
      { task_description: "t", repo_path: ".", notes: "n" },
      { mode: "allowlist", allow: ["task_description", "REPO_PATH"], logger: false },
    );
    expect(pairs(out)).toEqual({ TASK_DESCRIPTION: "t", REPO_PATH: "." });
    expect(reasons(out)).toEqual([["notes", "not_allowed"]]);
  });

  it("refuses to allow a reserved name or a non-identifier", () => {
    expect(() => createContextExporter({ mode: "allowlist", allow: ["LD_PRELOAD"] })).toThrow(
      /reserved/,
    );
    expect(() => createContextExporter({ mode: "allowlist", allow: ["a b"] })).toThrow(TypeError);
    expect(() => createContextExporter({ mode: "other" as never })).toThrow(TypeError);
  });

  it("honours host denylist additions", () => {
    const out = contextEnvPairs(
      { github_token: "x", notes: "y" },
      { mode: "bare", denylist: { suffixes: ["_TOKEN"] }, logger: false },
    );
    expect(reasons(out)).toEqual([["github_token", "reserved_name"]]);
  });
});

describe("contextEnvPairs: logging", () => {
  const SENTINEL = "SENTINEL-7f3a";

  it("logs each skip as a WARN with name and reason only", () => {
    const log = captureLog();
    contextEnvPairs(
      {
        "issue title": SENTINEL,
        ld_preload: SENTINEL,
        notes: `${SENTINEL}\0`,
        big: SENTINEL.repeat(20_000),
        tz: `/${SENTINEL}`,
        task_description: SENTINEL,
      },
      { mode: "bare", logger: log.logger },
    );
    const events = log.events();
    expect(events.map((e) => [e["level"], e["variable"], e["reason"], e["msg"]])).toEqual([
      [40, "BIG", "value_too_large", "context key skipped for env export"],
      [40, "ISSUE TITLE", "invalid_identifier", "context key skipped for env export"],
      [40, "LD_PRELOAD", "reserved_name", "context key skipped for env export"],
      [40, "NOTES", "value_contains_nul", "context key skipped for env export"],
      [40, "TZ", "unsafe_value", "context key skipped for env export"],
    ]);
    for (const line of log.lines) expect(line).not.toContain(SENTINEL);
  });

  it("uses the library logger (setLogger) by default", () => {
    const log = captureLog();
    setLogger(log.logger);
    try {
      contextEnvPairs({ lib_path: SENTINEL, "bad key": SENTINEL });
    } finally {
      setLogger(undefined);
    }
    expect(log.events()).toHaveLength(1);
    expect(log.lines.join("")).not.toContain(SENTINEL);
  });
});

describe("contextEnvPairs: properties", () => {
  const anyValue = fc.oneof(
    fc.string({ unit: "binary" }),
    fc.string(),
    fc.constantFrom("() { :; }", "a\0b", "/x", "", "../../x"),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.bigInt(),
    fc.constant(null),
    fc.constant(undefined),
    fc.object(),
  );
  const anyKey = fc.oneof(
    fc.string({ unit: "binary" }),
    fc.constantFrom(
      "ld_preload",
      "path",
      "__proto__",
      "constructor",
      "task_description",
      "repo_path",
      "REPO_PATH",
      "lang",
      "tz",
      "git_dir",
      "http_proxy",
    ),
    fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/),
  );
  const anyContext = fc.oneof(
    fc.dictionary(anyKey, anyValue),
    fc.array(fc.tuple(anyKey, anyValue)).map((entries) => new Map(entries)),
    fc.anything(),
  );

  it("never exports an invalid or reserved name, an unsafe value or a NUL", () => {
    fc.assert(
      fc.property(anyContext, (context) => {
        const out = contextEnvPairs(context, quiet);
        const names = new Set<string>();
        for (const [name, value] of out.pairs) {
          expect(name).toMatch(/^[A-Z_][A-Z0-9_]*$/);
          expect(isReservedName(name)).toBe(false);
          expect(value.includes("\0")).toBe(false);
          expect(value.startsWith("() {")).toBe(false);
          expect(names.has(name)).toBe(false);
          names.add(name);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("fuzz: 100,000 random contexts never throw", () => {
    // A plain seeded loop (fast-check's generators are too slow for 100k objects here).
    let seed = 0x7f3a;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) >>> 0;
      return seed % n;
    };
    const units = [
      "a",
      "Z",
      "_",
      "0",
      " ",
      "=",
      "\0",
      "é",
      "\uD800",
      "\uDC00",
      "ſ",
      ".",
      "$",
      "🎉",
    ];
    const specials = ["__proto__", "constructor", "toString", "ld_preload", "path", "tz", "lang"];
    const text = (): string => {
      let out = "";
      for (let i = random(6); i > 0; i--) out += units[random(units.length)];
      return out;
    };
    const value = (): unknown => {
      switch (random(9)) {
        case 0:
          return text();
        case 1:
          return random(1000) - 500;
        case 2:
          return random(2) === 0;
        case 3:
          return null;
        case 4:
          return { nested: text() };
        case 5:
          return [text()];
        case 6:
          return "() { :; }";
        case 7:
          return BigInt(random(100));
        default:
          return Number.NaN;
      }
    };
    const exporter = createContextExporter(quiet);
    let exported = 0;
    for (let run = 0; run < 100_000; run++) {
      const size = random(6);
      const useMap = random(4) === 0;
      const context: Record<string, unknown> | Map<unknown, unknown> = useMap
        ? new Map()
        : Object.create(null);
      for (let i = 0; i < size; i++) {
        const key = random(3) === 0 ? specials[random(specials.length)]! : text();
        if (context instanceof Map) context.set(random(10) === 0 ? random(9) : key, value());
        else context[key] = value();
      }
      const out = exporter(random(50) === 0 ? value() : context);
      exported += out.pairs.length;
    }
    expect(exported).toBeGreaterThan(0);
  });
});
