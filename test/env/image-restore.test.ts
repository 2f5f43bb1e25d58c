import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { recordImageEnv, restoreImageEnv } from "../../src/env/image-restore.js";
import { InvalidEnvError } from "../../src/errors.js";

const SENTINEL = "SENTINEL-7f3a";
const obj = (map: Map<string, string>) => Object.fromEntries(map);

const image = {
  PATH: "/usr/local/bin:/usr/bin",
  PYTHONPATH: "/image/lib",
  LD_PRELOAD: "/image/libfoo.so",
  NIX_PROFILES: "/nix/var",
  HOME: "/root",
};
const recordOptions = {
  strip: { names: ["PYTHONPATH", "LD_PRELOAD"], prefixes: ["NIX_"] },
  prepends: {
    PATH: ["/opt/runtime/bin", "/opt/runtime/sbin"],
    LD_LIBRARY_PATH: ["/opt/runtime/lib"],
  },
};

describe("recordImageEnv", () => {
  it("strips the chosen variables into SAVED_ and records prepends as ADDED_", () => {
    expect(obj(recordImageEnv(image, recordOptions))).toEqual({
      EXACTSPAWN_ADDED_LD_LIBRARY_PATH: "/opt/runtime/lib",
      EXACTSPAWN_ADDED_PATH: "/opt/runtime/bin:/opt/runtime/sbin",
      EXACTSPAWN_SAVED_LD_PRELOAD: "/image/libfoo.so",
      EXACTSPAWN_SAVED_NIX_PROFILES: "/nix/var",
      EXACTSPAWN_SAVED_PYTHONPATH: "/image/lib",
      HOME: "/root",
      LD_LIBRARY_PATH: "/opt/runtime/lib",
      PATH: "/opt/runtime/bin:/opt/runtime/sbin:/usr/local/bin:/usr/bin",
    });
  });

  it("a freshly observed value overwrites an inherited snapshot", () => {
    const nested = { PYTHONPATH: "/new", EXACTSPAWN_SAVED_PYTHONPATH: "/old" };
    expect(obj(recordImageEnv(nested, { strip: { names: ["PYTHONPATH"] } }))).toEqual({
      EXACTSPAWN_SAVED_PYTHONPATH: "/new",
    });
  });

  it("an absent variable leaves the inherited snapshot alone", () => {
    const nested = { EXACTSPAWN_SAVED_PYTHONPATH: "/old" };
    expect(obj(recordImageEnv(nested, { strip: { names: ["PYTHONPATH"] } }))).toEqual(nested);
  });

  it("does not re-add entries already present and keeps earlier ADDED records (nesting)", () => {
    const once = recordImageEnv(image, recordOptions);
    const twice = recordImageEnv(once, recordOptions);
    expect(obj(twice)).toEqual(obj(once));
    const more = recordImageEnv(once, { prepends: { PATH: ["/extra"] } });
    expect(more.get("PATH")).toBe(
      "/extra:/opt/runtime/bin:/opt/runtime/sbin:/usr/local/bin:/usr/bin",
    );
    expect(more.get("EXACTSPAWN_ADDED_PATH")).toBe("/extra:/opt/runtime/bin:/opt/runtime/sbin");
  });

  it("uses a configurable prefix and separator", () => {
    const out = recordImageEnv(
      { Path: "C:\\bin", SECRET: "s" },
      {
        prefix: "ACME_",
        separator: ";",
        strip: { names: ["SECRET"] },
        prepends: { Path: ["D:\\rt"] },
      },
    );
    expect(obj(out)).toEqual({
      ACME_ADDED_Path: "D:\\rt",
      ACME_SAVED_SECRET: "s",
      Path: "D:\\rt;C:\\bin",
    });
  });

  it.each([
    [{ strip: { names: "X" } }, TypeError],
    [{ prepends: { PATH: "/x" } }, TypeError],
    [{ prepends: { PATH: ["/a:/b"] } }, TypeError],
    [{ prefix: "" }, TypeError],
  ])("rejects malformed options %j", (options, type) => {
    expect(() => recordImageEnv(image, options as never)).toThrow(type);
  });
});

describe("restoreImageEnv", () => {
  it("round-trips the image environment", () => {
    expect(obj(restoreImageEnv(recordImageEnv(image, recordOptions)))).toEqual(image);
  });

  it.each([
    [
      "subtracts recorded entries, keeps the rest",
      { PATH: "/nix/bin:/usr/bin", EXACTSPAWN_ADDED_PATH: "/nix/bin" },
      { PATH: "/usr/bin" },
    ],
    [
      "deletes a variable left empty",
      { LD_LIBRARY_PATH: "/nix/lib", EXACTSPAWN_ADDED_LD_LIBRARY_PATH: "/nix/lib" },
      {},
    ],
    [
      "removes every occurrence, wherever it is",
      { PATH: "/a:/nix/bin:/b:/nix/bin", EXACTSPAWN_ADDED_PATH: "/nix/bin" },
      { PATH: "/a:/b" },
    ],
    ["ignores an ADDED record whose variable is gone", { EXACTSPAWN_ADDED_PATH: "/nix/bin" }, {}],
    [
      "restores a SAVED value where the variable is absent",
      { EXACTSPAWN_SAVED_PYTHONPATH: "/image/lib" },
      { PYTHONPATH: "/image/lib" },
    ],
    [
      "a live value wins over its snapshot",
      { PYTHONPATH: "/live", EXACTSPAWN_SAVED_PYTHONPATH: "/image/lib" },
      { PYTHONPATH: "/live" },
    ],
    [
      "a live empty value wins too",
      { PYTHONPATH: "", EXACTSPAWN_SAVED_PYTHONPATH: "/image/lib" },
      { PYTHONPATH: "" },
    ],
    [
      "a variable both stripped and prepended comes back as saved",
      {
        LD_LIBRARY_PATH: "/nix/lib",
        EXACTSPAWN_ADDED_LD_LIBRARY_PATH: "/nix/lib",
        EXACTSPAWN_SAVED_LD_LIBRARY_PATH: "/image/lib",
      },
      { LD_LIBRARY_PATH: "/image/lib" },
    ],
    [
      "drops tracking variables with an empty target",
      { EXACTSPAWN_SAVED_: "x", EXACTSPAWN_ADDED_: "y", A: "1" },
      { A: "1" },
    ],
  ])("%s", (_label, env, expected) => {
    expect(obj(restoreImageEnv(env))).toEqual(expected);
  });

  it("applies extras last", () => {
    const out = restoreImageEnv(
      {
        PYTHONPATH: "/live",
        EXACTSPAWN_SAVED_PYTHONPATH: "/img",
        PATH: "/nix:/usr/bin",
        EXACTSPAWN_ADDED_PATH: "/nix",
      },
      { extra: { PATH: "/custom", BASH_ENV: "/root/.bashrc" } },
    );
    expect(obj(out)).toEqual({ PATH: "/custom", PYTHONPATH: "/live", BASH_ENV: "/root/.bashrc" });
  });

  it("replaces, never merges: nothing comes from process.env", () => {
    expect(obj(restoreImageEnv({}))).toEqual({});
    expect(obj(restoreImageEnv({ A: "1" }))).toEqual({ A: "1" });
  });

  it("keeps __proto__ and constructor as ordinary names", () => {
    const env = JSON.parse('{"__proto__":"p","EXACTSPAWN_SAVED_constructor":"c"}') as Record<
      string,
      string
    >;
    expect([...restoreImageEnv(env)]).toEqual([
      ["__proto__", "p"],
      ["constructor", "c"],
    ]);
  });

  it("refuses extras that set tracking variables, and bad values, without echoing", () => {
    for (const call of [
      () => restoreImageEnv({}, { extra: { EXACTSPAWN_SAVED_X: SENTINEL } }),
      () => restoreImageEnv({ A: `${SENTINEL}\0` }),
    ]) {
      let error: unknown;
      try {
        call();
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(InvalidEnvError);
      expect((error as Error).message).not.toContain(SENTINEL);
    }
  });

  it("is idempotent (property)", () => {
    const name = fc.oneof(
      fc.constantFrom("PATH", "PYTHONPATH", "LD_PRELOAD", "A", "__proto__"),
      fc
        .constantFrom("PATH", "PYTHONPATH", "LD_PRELOAD", "A", "")
        .map((n) => `EXACTSPAWN_SAVED_${n}`),
      fc.constantFrom("PATH", "LD_LIBRARY_PATH", "A", "").map((n) => `EXACTSPAWN_ADDED_${n}`),
    );
    const entry = fc.constantFrom("", "/a", "/b", "/nix/bin", "/usr/bin");
    const value = fc.array(entry, { maxLength: 4 }).map((entries) => entries.join(":"));
    const extra = fc.dictionary(fc.constantFrom("PATH", "B", "PYTHONPATH"), value, { maxKeys: 2 });
    fc.assert(
      fc.property(fc.dictionary(name, value, { maxKeys: 8 }), extra, (env, extras) => {
        const once = restoreImageEnv(env, { extra: extras });
        const twice = restoreImageEnv(once, { extra: extras });
        expect([...twice]).toEqual([...once]);
        for (const key of once.keys()) expect(key.startsWith("EXACTSPAWN_SAVED_")).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it("restore undoes record for any image (property)", () => {
    const entry = fc.constantFrom("/a", "/b", "/usr/bin");
    const list = fc
      .array(entry, { minLength: 1, maxLength: 3 })
      .map((e) => [...new Set(e)].join(":"));
    const imageEnv = fc.record(
      { PATH: list, PYTHONPATH: fc.string(), OTHER: fc.string() },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(imageEnv, (env) => {
        const clean = Object.fromEntries(
          Object.entries(env).filter(([, v]) => !v.includes("\0") && v.isWellFormed()),
        );
        const recorded = recordImageEnv(clean, {
          strip: { names: ["PYTHONPATH"] },
          prepends: { PATH: ["/nix/bin"] },
        });
        expect(obj(restoreImageEnv(recorded))).toEqual(clean);
      }),
      { numRuns: 500 },
    );
  });
});
