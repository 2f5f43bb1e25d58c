/** Validation of every environment shape: bad input fails clearly and never echoes a value. */
import { describe, expect, it } from "vitest";
import {
  envEntries,
  envEntriesOnce,
  knownEnvTotals,
  packedEnvp,
  packStrings,
} from "../../src/env/env-input.js";
import { freezeMap } from "../../src/env/frozen-map.js";
import { InvalidEnvError } from "../../src/errors.js";
import { envPairBytes, execFits } from "../../src/limits.js";

const SENTINEL = "SENTINEL-c0ffee";
const limits = { execLimit: 1 << 20, maxArgStrlen: 131072 };

type Case = [label: string, call: () => unknown, mention: RegExp];

const cases: Case[] = [
  ["NUL in a record value", () => envEntries({ A: `${SENTINEL}\0` }), /value of A contains NUL/],
  ["NUL in a name", () => envEntries({ "A\0B": SENTINEL }), /contains NUL/],
  ["'=' in a name", () => envEntries({ "A=B": SENTINEL }), /contains '='/],
  ["an empty name", () => envEntries({ "": SENTINEL }), /name is empty/],
  [
    "a number value",
    () => envEntries({ A: 42 as unknown as string }),
    /string or Buffer, got number/,
  ],
  ["a null value", () => envEntries({ A: null as unknown as string }), /got null/],
  ["a lone surrogate value", () => envEntries({ A: `${SENTINEL}\ud800` }), /lone UTF-16 surrogate/],
  ["a lone surrogate name", () => envEntries({ "A\udc00": SENTINEL }), /lone UTF-16 surrogate/],
  ["NUL in a Buffer value", () => envEntries({ A: Buffer.from(`${SENTINEL}\0`) }), /contains NUL/],
  ["a pair without '='", () => envEntries([SENTINEL]), /entry 0 is not of the form NAME=value/],
  ["a pair with an empty name", () => envEntries([`=${SENTINEL}`]), /empty name/],
  ["a Buffer pair without '='", () => envEntries([Buffer.from(SENTINEL)]), /no '='/],
  ["a non-string pair", () => envEntries([7 as unknown as string]), /entry 0 must be/],
  [
    "a Map with a non-string name",
    () => envEntries(new Map([[1 as unknown as string, SENTINEL]])),
    /must be a string/,
  ],
  ["a non-object env", () => envEntries(SENTINEL as unknown as string[]), /expected a record/],
  ["envPairBytes with NUL", () => envPairBytes("A", `${SENTINEL}\0`), /contains NUL/],
  ["envPairBytes with '='", () => envPairBytes("A=", SENTINEL), /contains '='/],
  ["envPairBytes with a non-string", () => envPairBytes("A", 1 as unknown as string), /got number/],
  [
    "execFits with NUL in argv",
    () => execFits("/x", ["x", `${SENTINEL}\0`], {}, limits),
    /argv\[1\] contains NUL/,
  ],
  [
    "execFits with a surrogate in argv",
    () => execFits("/x", [`\ud800${SENTINEL}`], {}, limits),
    /argv\[0\] contains a lone/,
  ],
  [
    "execFits with a non-string argv",
    () => execFits("/x", [{} as string], {}, limits),
    /argv\[0\] must be/,
  ],
  ["execFits with an empty file", () => execFits("", [], {}, limits), /file must be/],
  [
    "execFits with NUL in the file",
    () => execFits(`/x\0${SENTINEL}`, [], {}, limits),
    /file contains NUL/,
  ],
  [
    "execFits with a bad env",
    () => execFits("/x", [], { A: `\0${SENTINEL}` }, limits),
    /contains NUL/,
  ],
];

describe("bad input", () => {
  it.each(cases)(
    "%s → InvalidEnvError (a TypeError) without the value",
    (_label, call, mention) => {
      let caught: unknown;
      try {
        call();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(InvalidEnvError);
      expect(caught).toBeInstanceOf(TypeError);
      const error = caught as InvalidEnvError;
      expect(error.message).toMatch(mention);
      expect(error.code).toBe("ERR_EXACTSPAWN_INVALID_ENV");
      expect(`${error.message}\n${error.stack}`).not.toContain(SENTINEL);
    },
  );
});

describe("records", () => {
  it("reads own __proto__ and constructor keys as ordinary names", () => {
    const record = JSON.parse('{"__proto__": "p", "constructor": "c", "toString": "t"}');
    const names = envEntries(record).map((e) => e.name);
    expect(names).toEqual(["__proto__", "constructor", "toString"]);
    expect(packedEnvp(envEntries(record)).bytes.toString()).toBe(
      "__proto__=p\0constructor=c\0toString=t\0",
    );
  });

  it("never reads inherited properties", () => {
    const record = Object.create({ INHERITED: "x" }) as Record<string, string>;
    record["OWN"] = "y";
    expect(envEntries(record).map((e) => e.name)).toEqual(["OWN"]);
  });

  it("skips undefined values like child_process does", () => {
    expect(envEntries({ A: undefined, B: "b" }).map((e) => e.name)).toEqual(["B"]);
  });
});

describe("the rendered envp", () => {
  it("keeps order, duplicates and non-UTF-8 bytes exactly", () => {
    const raw = Buffer.from([0x41, 0x3d, 0xff, 0x80]);
    const envp = packedEnvp(envEntries(["B=2", raw, "B=3"]));
    expect(envp.count).toBe(3);
    expect(envp.bytes).toEqual(Buffer.concat([Buffer.from("B=2\0"), raw, Buffer.from("\0B=3\0")]));
  });

  it("encodes non-ASCII names of string entries as UTF-8", () => {
    const envp = packedEnvp(envEntries({ É: Buffer.from([0xff]) }));
    expect(envp.bytes).toEqual(Buffer.from([0xc3, 0x89, 0x3d, 0xff, 0]));
  });
});

describe("envEntriesOnce", () => {
  it("validates a frozen record of strings once and returns the same frozen list", () => {
    const env = Object.freeze({ B: "2", A: "é" });
    const first = envEntriesOnce(env);
    expect(first).toEqual(envEntries(env));
    expect(envEntriesOnce(env)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(knownEnvTotals(first)).toEqual({ bytes: 4 + 5, largest: 5 });
  });

  it("validates again anything that can still change", () => {
    const open: Record<string, string> = { A: "1" };
    expect(envEntriesOnce(open).map((e) => e.value)).toEqual(["1"]);
    open["A"] = "2";
    expect(envEntriesOnce(open).map((e) => e.value)).toEqual(["2"]);
    // A frozen record still holds a mutable Buffer; a frozen Map is still a Map.
    const bytes = Buffer.from("x");
    const withBuffer = Object.freeze({ A: bytes });
    expect(envEntriesOnce(withBuffer)).not.toBe(envEntriesOnce(withBuffer));
    const map = Object.freeze(new Map([["A", "1"]]));
    expect(envEntriesOnce(map)).not.toBe(envEntriesOnce(map));
    expect(knownEnvTotals(envEntriesOnce(open))).toBeUndefined();
  });

  it("treats a map frozen by the library (freezeMap) as fixed: its list is kept", () => {
    const map = freezeMap(
      new Map([
        ["A", "1"],
        ["B", "é"],
      ]),
    );
    const first = envEntriesOnce(map);
    expect(first.map((e) => [e.name, e.value])).toEqual([
      ["A", "1"],
      ["B", "é"],
    ]);
    expect(envEntriesOnce(map)).toBe(first);
    expect(knownEnvTotals(first)).toEqual({ bytes: 4 + 5, largest: 5 });
    expect(packedEnvp(first)).toBe(packedEnvp(envEntriesOnce(map)));
  });

  it("never caches a refusal", () => {
    const env = Object.freeze({ A: "bad\0" });
    expect(() => envEntriesOnce(env)).toThrow(InvalidEnvError);
    expect(() => envEntriesOnce(env)).toThrow(InvalidEnvError);
  });
});

describe("packedEnvp and packStrings", () => {
  const unpack = (bytes: Buffer) => bytes.toString("latin1").split("\0").slice(0, -1);

  it("packs every entry with its NUL, byte-exact and in order", () => {
    const raw = Buffer.from([0x41, 0x3d, 0xff, 0x80]);
    const entries = envEntries(["B=2", raw, "B=3", "C=é"]);
    const packed = packedEnvp(entries);
    expect(packed.count).toBe(4);
    expect(packed.bytes).toEqual(
      Buffer.concat([Buffer.from("B=2\0"), raw, Buffer.from("\0B=3\0C=é\0")]),
    );
    expect(packedEnvp(envEntries({ X: "1", Y: "" })).bytes).toEqual(Buffer.from("X=1\0Y=\0"));
    expect(packedEnvp([])).toMatchObject({ count: 0, bytes: Buffer.alloc(0) });
  });

  it("packs a frozen environment once", () => {
    const entries = envEntriesOnce(Object.freeze({ A: "1" }));
    expect(packedEnvp(entries)).toBe(packedEnvp(entries));
    const open = envEntries({ A: "1" });
    expect(packedEnvp(open)).not.toBe(packedEnvp(open));
  });

  it("packs argv strings and Buffers, and refuses a NUL inside one", () => {
    const packed = packStrings(["a", Buffer.from([0xff]), ""], "spawn: argv");
    expect(packed.count).toBe(3);
    expect(packed.bytes).toEqual(Buffer.from([0x61, 0, 0xff, 0, 0]));
    expect(unpack(packStrings(["x", "é"], "w").bytes)).toEqual(["x", "Ã©"]);
    expect(() => packStrings(["a", "b\0c"], "spawn: argv")).toThrow(
      new TypeError("spawn: argv[1] contains a NUL byte"),
    );
    expect(() => packStrings([Buffer.from([1, 0])], "spawn: argv")).toThrow(/argv\[0\]/);
  });

  it("writes UTF-8 whatever the exact size says: ASCII-only lists and lists with é, ÿ, € or 😀", () => {
    // Characters U+0080–U+00FF are one byte in latin1 but two in UTF-8: a list
    // holding one must never take the ASCII path.
    const lists: (string | Buffer)[][] = [
      ["abc", "", "d"],
      ["abc", Buffer.from([0xff, 0x80]), "x"],
      ["é"],
      ["a", "ÿ", Buffer.from([0x41])],
      ["€", "😀"],
    ];
    for (const list of lists) {
      const expected = Buffer.concat(
        list.map((item) => Buffer.concat([Buffer.from(item), Buffer.from([0])])),
      );
      expect(packStrings(list, "w", expected.length).bytes).toEqual(expected);
      expect(packStrings(list, "w").bytes).toEqual(expected);
    }
    const env = envEntries({ A: "é", B: "plain", ÿ: "x", C: Buffer.from([0xe9]) });
    expect(packedEnvp(env).bytes).toEqual(
      Buffer.concat([Buffer.from("A=é\0B=plain\0ÿ=x\0C=", "utf8"), Buffer.from([0xe9, 0])]),
    );
  });
});
