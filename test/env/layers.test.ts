import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contextEnvPairs } from "../../src/env/context-export.js";
import { createDenylist, isReservedName } from "../../src/env/denylist.js";
import { ENV_LAYERS, type LayerInput, layerEnv, trustedEnvMap } from "../../src/env/layers.js";
import { InvalidEnvError } from "../../src/errors.js";

const SENTINEL = "SENTINEL-7f3a";
const denylist = createDenylist();
// The precedence tests use bare names throughout, as the recipe-runner-compat preset does.
const base = { denylist, stepPrefix: "RECIPE_VAR_", bareNames: "any" } as const;
const ctx = (context: Record<string, unknown>) =>
  contextEnvPairs(context, { mode: "bare", logger: false });
const m = (record: Record<string, string>) => new Map(Object.entries(record));

describe("layerEnv: precedence", () => {
  it("lists the layers lowest first", () => {
    expect(ENV_LAYERS).toEqual([
      "inherited",
      "context",
      "step",
      "session",
      "overlay",
      "extra",
      "host",
      "grant",
      "correlation",
    ]);
  });

  it("each layer beats every layer below it", () => {
    // X is set by every layer; each layer also sets its own marker.
    const input: LayerInput = {
      ...base,
      inherited: m({ X: "inherited", A: "inherited" }),
      context: ctx({ x: "context", b: "context" }),
      stepValues: m({ X: "step", C: "step" }),
      session: m({ X: "session", D: "session" }),
      overlay: m({ X: "overlay", E: "overlay" }),
      extra: m({ X: "extra", F: "extra" }),
      host: m({ X: "host", G: "host" }),
      grants: m({ X: "grant", H: "grant" }),
      correlation: ["X", "correlation"],
    };
    const out = layerEnv(input);
    expect(out.env.get("X")).toBe("correlation");
    expect(Object.fromEntries(out.origin)).toEqual({
      A: "inherited",
      B: "context",
      C: "step",
      D: "session",
      E: "overlay",
      F: "extra",
      G: "host",
      H: "grant",
      X: "correlation",
    });
    expect(out.stepValueNames).toEqual(["C"]);
    expect([...out.env.keys()]).toEqual(["A", "B", "C", "D", "E", "F", "G", "H", "X"]);
  });

  it.each(ENV_LAYERS.slice(1).map((layer, i) => [layer, ENV_LAYERS[i]!] as const))(
    "%s overrides %s",
    (upper, lower) => {
      const put = (layer: string, value: string): Partial<LayerInput> => {
        switch (layer) {
          case "inherited":
            return { inherited: m({ TASK_DESCRIPTION: value }) };
          case "context":
            return { context: ctx({ task_description: value }) };
          case "step":
            return { stepValues: m({ TASK_DESCRIPTION: value }) };
          case "correlation":
            return { correlation: ["TASK_DESCRIPTION", value] };
          case "grant":
            return { grants: m({ TASK_DESCRIPTION: value }) };
          default:
            return { [layer]: m({ TASK_DESCRIPTION: value }) };
        }
      };
      const out = layerEnv({
        ...base,
        inherited: new Map(),
        ...put(lower, "low"),
        ...put(upper, "high"),
      });
      expect(out.env.get("TASK_DESCRIPTION")).toBe("high");
      expect(out.origin.get("TASK_DESCRIPTION")).toBe(upper);
    },
  );

  it("context cannot override PATH or HOME; the inherited value stays", () => {
    const out = layerEnv({
      ...base,
      inherited: m({ PATH: "/usr/bin" }),
      context: ctx({ path: "/evil" }),
    });
    expect(out.env.get("PATH")).toBe("/usr/bin");
    expect(out.skipped).toEqual([
      { layer: "context", key: "path", name: "PATH", reason: "reserved_name" },
    ]);
  });

  it("the correlation id cannot be forged from context", () => {
    const out = layerEnv({
      ...base,
      inherited: new Map(),
      context: ctx({ exactspawn_run_id: "forged" }),
      correlation: ["EXACTSPAWN_RUN_ID", "real"],
    });
    expect(out.env.get("EXACTSPAWN_RUN_ID")).toBe("real");
  });
});

describe("layerEnv: step values", () => {
  it("accepts names under the step prefix, even with reserved suffixes", () => {
    const out = layerEnv({
      ...base,
      inherited: new Map(),
      stepValues: m({ RECIPE_VAR_build_opts: "x", RECIPE_VAR_OUT: "y", OUT: "z" }),
    });
    expect(out.stepValueNames).toEqual(["OUT", "RECIPE_VAR_OUT", "RECIPE_VAR_build_opts"]);
  });

  it("skips reserved, non-identifier and unsafe step values", () => {
    const out = layerEnv({
      ...base,
      inherited: m({ PATH: "/usr/bin" }),
      stepValues: m({
        PATH: "/evil",
        ld_preload: "x",
        "bad-name": "y",
        LANG: "../x",
        EXACTSPAWN_X: "z",
      }),
    });
    expect(out.env.get("PATH")).toBe("/usr/bin");
    expect(out.skipped.map((s) => [s.key, s.reason])).toEqual([
      ["PATH", "reserved_name"],
      ["ld_preload", "reserved_name"],
      ["bad-name", "invalid_identifier"],
      ["LANG", "unsafe_value"],
      ["EXACTSPAWN_X", "reserved_name"],
    ]);
  });

  it("a step value with NUL is an error that does not echo it", () => {
    expect(() =>
      layerEnv({ ...base, inherited: new Map(), stepValues: m({ RECIPE_VAR_X: `${SENTINEL}\0` }) }),
    ).toThrow(InvalidEnvError);
    try {
      layerEnv({ ...base, inherited: new Map(), stepValues: m({ RECIPE_VAR_X: `${SENTINEL}\0` }) });
    } catch (error) {
      expect((error as Error).message).not.toContain(SENTINEL);
    }
  });
});

describe("layerEnv: case-insensitive (Windows-style) names", () => {
  it("one variable per ASCII case-fold; the higher layer's value and spelling win", () => {
    const out = layerEnv({
      ...base,
      caseInsensitive: true,
      inherited: m({ Path: "C:\\Windows", windir: "C:\\Windows" }),
      overlay: m({ PATH: "C:\\tools" }),
      host: m({ WINDIR: "D:\\" }),
    });
    expect(Object.fromEntries(out.env)).toEqual({ PATH: "C:\\tools", WINDIR: "D:\\" });
    expect(out.origin.get("PATH")).toBe("overlay");
  });

  it("without the option, names differing in case are distinct", () => {
    const out = layerEnv({ ...base, inherited: m({ Path: "a" }), overlay: m({ PATH: "b" }) });
    expect(Object.fromEntries(out.env)).toEqual({ PATH: "b", Path: "a" });
  });
});

describe("trustedEnvMap", () => {
  it("keeps __proto__, constructor and toString as ordinary names", () => {
    const record = JSON.parse('{"__proto__":"a","constructor":"b","toString":"c"}') as Record<
      string,
      string
    >;
    expect([...trustedEnvMap(record, "overlay")]).toEqual([
      ["__proto__", "a"],
      ["constructor", "b"],
      ["toString", "c"],
    ]);
  });

  it("accepts executable and loader settings (trusted), skips undefined", () => {
    expect([...trustedEnvMap({ LD_PRELOAD: "/x.so", SKIP: undefined }, "overlay")]).toEqual([
      ["LD_PRELOAD", "/x.so"],
    ]);
  });

  it.each([
    [{ "A=B": SENTINEL }, /contains '='/],
    [{ "": SENTINEL }, /empty/],
    [{ A: `x\0${SENTINEL}` }, /contains NUL/],
    [{ A: `\uD800${SENTINEL}` }, /lone UTF-16 surrogate/],
    [{ A: 5 }, /must be a string/],
    [new Map([["A\0", SENTINEL]]), /contains NUL/],
  ])("rejects %j with an InvalidEnvError echoing no value", (input, message) => {
    let error: unknown;
    try {
      trustedEnvMap(input, "overlay");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidEnvError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain(SENTINEL);
  });
});

describe("layerEnv: properties", () => {
  const name = fc.oneof(
    fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,10}$/),
    fc.constantFrom(
      "PATH",
      "HOME",
      "LD_PRELOAD",
      "EXACTSPAWN_RUN_ID",
      "GIT_DIR",
      "TASK_DESCRIPTION",
      "path",
    ),
  );
  const value = fc.string();
  const record = fc.dictionary(name, value, { maxKeys: 8 });

  it("untrusted layers never set a reserved name nor override a host-owned one", () => {
    fc.assert(
      fc.property(record, record, record, record, (inherited, context, steps, host) => {
        const hostMap = new Map(Object.entries(host));
        const out = layerEnv({
          ...base,
          inherited: new Map(Object.entries(inherited)),
          context: ctx(context),
          stepValues: new Map(Object.entries(steps).filter(([, v]) => !v.includes("\0"))),
          host: hostMap,
          correlation: ["EXACTSPAWN_RUN_ID", "run-1"],
        });
        for (const [finalName, layer] of out.origin) {
          if (layer === "context" || layer === "step") {
            expect(isReservedName(finalName) && !finalName.startsWith("RECIPE_VAR_")).toBe(false);
          }
        }
        for (const [hostName, hostValue] of hostMap) {
          if (hostName === "EXACTSPAWN_RUN_ID") continue;
          expect(out.env.get(hostName)).toBe(hostValue);
          expect(out.origin.get(hostName)).toBe("host");
        }
        expect(out.env.get("EXACTSPAWN_RUN_ID")).toBe("run-1");
      }),
      { numRuns: 500 },
    );
  });
});

describe("layerEnv: against a naive oracle", () => {
  // The oracle applies every layer in precedence order to a plain record (the
  // last write wins) and sorts the names: what layerEnv's merge must produce.
  const pool = ["A", "PATH", "Z", "_x", "b", "RECIPE_VAR_a", "RECIPE_VAR_a__x", "RECIPE_VAR_b"];
  const stepPool = [
    "RECIPE_VAR_a",
    "RECIPE_VAR_a__x",
    "RECIPE_VAR_b",
    "RECIPE_VAR_c",
    "RECIPE_VAR_Ab",
  ];
  const value = fc.stringMatching(/^[a-z0-9 ]{0,6}$/);
  const layer = (names: string[]) =>
    fc.dictionary(fc.constantFrom(...names), value, { maxKeys: 6 });
  const trusted = ["session", "overlay", "extra", "host", "grant"] as const;

  it("gives each name the highest layer's value, in code-unit order, with that layer as origin", () => {
    fc.assert(
      fc.property(
        layer(pool),
        layer(stepPool),
        fc.tuple(...trusted.map(() => layer(pool))),
        fc.option(fc.constantFrom(...pool), { nil: undefined }),
        fc.boolean(),
        (inherited, steps, upper, correlated, caseInsensitive) => {
          const expected: Record<string, [string, string]> = {};
          const apply = (record: Record<string, string>, origin: string) => {
            for (const [name, v] of Object.entries(record)) expected[name] = [v, origin];
          };
          apply(inherited, "inherited");
          apply(steps, "step");
          trusted.forEach((origin, i) => {
            apply(upper[i]!, origin);
          });
          if (correlated !== undefined) expected[correlated] = ["run-1", "correlation"];
          const out = layerEnv({
            denylist,
            stepPrefix: "RECIPE_VAR_",
            caseInsensitive,
            inherited: m(inherited),
            stepValues: m(steps),
            session: m(upper[0]!),
            overlay: m(upper[1]!),
            extra: m(upper[2]!),
            host: m(upper[3]!),
            grants: m(upper[4]!),
            correlation: correlated === undefined ? undefined : [correlated, "run-1"],
          });
          const names = Object.keys(expected).sort();
          expect([...out.env]).toEqual(names.map((n) => [n, expected[n]![0]]));
          expect([...out.origin].sort()).toEqual(names.map((n) => [n, expected[n]![1]]));
          expect(out.stepValueNames).toEqual(names.filter((n) => expected[n]![1] === "step"));
          expect(out.skipped).toEqual([]);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("layerEnv: undeclared bare names (the secure default)", () => {
  // Broken once on purpose: with `undeclared()` returning false, the first two
  // tests below went red (TASK, PAGER_X and TASK_DESCRIPTION were set); restored, green.
  const strict = { denylist, stepPrefix: "RECIPE_VAR_" } as const;

  it("refuses a bare step-value name (an alias) the host did not declare", () => {
    const out = layerEnv({
      ...strict,
      inherited: new Map(),
      stepValues: m({ RECIPE_VAR_task: "t", TASK: "t", PAGER_X: "p" }),
    });
    expect([...out.env.keys()]).toEqual(["RECIPE_VAR_task"]);
    expect(out.skipped.map((s) => [s.key, s.reason])).toEqual([
      ["TASK", "undeclared_name"],
      ["PAGER_X", "undeclared_name"],
    ]);
  });

  it("refuses a bare context name unless declared; namespaced names pass", () => {
    const out = layerEnv({
      ...strict,
      contextNamespace: "CTX_",
      bareNames: new Set(["REPO_PATH"]),
      inherited: new Map(),
      context: ctx({ task_description: "t", repo_path: "r" }),
    });
    expect([...out.env.keys()]).toEqual(["REPO_PATH"]);
    expect(out.skipped.map((s) => [s.name, s.reason])).toEqual([
      ["TASK_DESCRIPTION", "undeclared_name"],
    ]);
    const namespaced = layerEnv({
      ...strict,
      contextNamespace: "CTX_",
      inherited: new Map(),
      context: contextEnvPairs({ task_description: "t" }, { logger: false }),
    });
    expect([...namespaced.env]).toEqual([["CTX_TASK_DESCRIPTION", "t"]]);
  });

  it("lets a declared alias through, still subject to the denylist", () => {
    const out = layerEnv({
      ...strict,
      bareNames: new Set(["REPORT"]),
      inherited: new Map(),
      stepValues: m({ RECIPE_VAR_report: "r", REPORT: "r" }),
    });
    expect([...out.env.keys()]).toEqual(["RECIPE_VAR_report", "REPORT"]);
  });
});
