/** The limits policy against a fake binding: probing, degradation, the model's arithmetic. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { envEntries } from "../src/env/env-input.js";
import {
  ENV_BUDGET_FLOOR,
  envBudgetForLimit,
  envPairBytes,
  execFits,
  execLimitForStack,
  footprintOf,
  limitsFromProbe,
  MAX_ARG_STRLEN,
  PER_VALUE_ENV_CAP,
} from "../src/limits.js";
import type { NativeBinding, RawProbe, RawProbedValue } from "../src/native.js";

const KIB = 1024;
const MIB = 1024 * KIB;

const ok = (value: number): RawProbedValue => ({ value, unlimited: false, error: null });
const unlimited: RawProbedValue = { value: null, unlimited: true, error: null };
const failed = (error: string): RawProbedValue => ({ value: null, unlimited: false, error });

function fakeBinding(probe: Partial<RawProbe>): NativeBinding {
  const full: RawProbe = {
    argMax: ok(2 * MIB),
    stackSoft: ok(8 * MIB),
    stackHard: unlimited,
    pageSize: ok(4096),
    ...probe,
  };
  return { sourceStamp: "sfake", napiVersion: 8, probe: () => full };
}

describe("constants", () => {
  it("match the kernel and the seed", () => {
    expect(MAX_ARG_STRLEN).toBe(32 * 4096);
    expect(PER_VALUE_ENV_CAP).toBe(MAX_ARG_STRLEN - 4096);
    expect(ENV_BUDGET_FLOOR).toBe(262_144);
  });
});

describe("execLimitForStack", () => {
  it.each([
    [64 * KIB, 128 * KIB],
    [256 * KIB, 128 * KIB],
    [512 * KIB + 4, 128 * KIB + 1],
    [1 * MIB, 256 * KIB],
    [8 * MIB, 2 * MIB],
    [24 * MIB, 6 * MIB],
    [1024 * MIB, 6 * MIB],
  ])("stack %i gives %i", (stack, limit) => {
    expect(execLimitForStack(stack)).toBe(limit);
  });

  it("treats an unlimited stack as the 6 MiB cap, not infinity", () => {
    expect(execLimitForStack("unlimited")).toBe(6 * MIB);
  });
});

describe("limitsFromProbe", () => {
  it("uses the stack limit and reports every field", () => {
    const limits = limitsFromProbe(fakeBinding({}));
    expect(limits).toMatchObject({
      source: "native",
      argMax: 2 * MIB,
      stackSoft: 8 * MIB,
      stackHard: "unlimited",
      pageSize: 4096,
      execLimit: 2 * MIB,
      maxArgStrlen: MAX_ARG_STRLEN,
      envBudget: 2 * MIB - 128 * KIB,
      errors: {},
      fallbackReason: undefined,
    });
  });

  it("reports an unlimited stack as such", () => {
    const limits = limitsFromProbe(fakeBinding({ stackSoft: unlimited }));
    expect(limits.stackSoft).toBe("unlimited");
    expect(limits.execLimit).toBe(6 * MIB);
  });

  it("degrades a failed stack read to sysconf(ARG_MAX), reporting the field", () => {
    const limits = limitsFromProbe(
      fakeBinding({ stackSoft: failed("EPERM"), stackHard: failed("EPERM"), argMax: ok(MIB) }),
    );
    expect(limits).toMatchObject({
      source: "native",
      stackSoft: null,
      execLimit: MIB,
      errors: { stackSoft: "EPERM", stackHard: "EPERM" },
    });
  });

  it("falls back to the floor when nothing can be read", () => {
    const limits = limitsFromProbe(
      fakeBinding({ stackSoft: failed("EIO"), argMax: failed("EINVAL") }),
    );
    expect(limits).toMatchObject({ source: "fallback", execLimit: ENV_BUDGET_FLOOR });
    expect(limits.envBudget).toBe(ENV_BUDGET_FLOOR);
  });

  it("uses the floor for both limit and budget without the addon", () => {
    const limits = limitsFromProbe(null, "disabled for a test");
    expect(limits).toMatchObject({
      source: "fallback",
      execLimit: ENV_BUDGET_FLOOR,
      envBudget: ENV_BUDGET_FLOOR,
      fallbackReason: "disabled for a test",
    });
  });

  it("derives the per-string limit from the page size", () => {
    expect(limitsFromProbe(fakeBinding({ pageSize: ok(65536) })).maxArgStrlen).toBe(32 * 65536);
  });
});

describe("envBudgetForLimit", () => {
  it("keeps a 128 KiB argv reserve, capped at half the limit", () => {
    expect(envBudgetForLimit(2 * MIB)).toBe(2 * MIB - 128 * KIB);
    expect(envBudgetForLimit(256 * KIB)).toBe(128 * KIB);
    expect(envBudgetForLimit(128 * KIB)).toBe(64 * KIB);
  });
});

describe("envPairBytes", () => {
  it("counts UTF-8 bytes, the '=' and the NUL", () => {
    expect(envPairBytes("A", "")).toBe(3);
    expect(envPairBytes("KEY", "value")).toBe(10);
    expect(envPairBytes("K", "é")).toBe(5);
    expect(envPairBytes("K", "😀")).toBe(7);
    expect(envPairBytes("K", Buffer.from([0xff, 0xfe]))).toBe(5);
  });
});

describe("execFits arithmetic", () => {
  const limits = { execLimit: 1000, maxArgStrlen: 100 };

  it("adds strings, the filename and 8 bytes per pointer", () => {
    const fit = execFits("/bin/x", ["x", "-c"], { A: "1", BB: "22" }, limits);
    expect(fit).toMatchObject({
      argvBytes: 2 + 3,
      envBytes: 4 + 6,
      filenameBytes: 7,
      pointerBytes: 8 * 4,
      footprint: 5 + 10 + 7 + 32,
      fits: true,
      overBy: 0,
      oversized: [],
    });
  });

  it("counts one argv pointer even when argv is empty", () => {
    expect(execFits("/x", [], {}, limits).pointerBytes).toBe(8);
  });

  it("reports the overflow at the exact byte", () => {
    const limits = { execLimit: 1000, maxArgStrlen: 4096 };
    const base = execFits("/x", ["x"], { V: "" }, limits).footprint;
    const at = execFits("/x", ["x"], { V: "v".repeat(1000 - base) }, limits);
    expect(at).toMatchObject({ fits: true, footprint: 1000 });
    const over = execFits("/x", ["x"], { V: "v".repeat(1001 - base) }, limits);
    expect(over).toMatchObject({ fits: false, overBy: 1 });
  });

  it("names every oversized string by argv index or env name, with its size", () => {
    const fit = execFits(
      "/x",
      ["x", "a".repeat(100), "b".repeat(99)],
      { SMALL: "s", BIG: "c".repeat(200) },
      { execLimit: 100_000, maxArgStrlen: 100 },
    );
    expect(fit.fits).toBe(false);
    expect(fit.oversized).toEqual([
      { kind: "argv", index: 1, bytes: 101 },
      { kind: "env", name: "BIG", bytes: 205 },
    ]);
  });

  it("accepts the env as a record, a Map or NAME=value strings and Buffers alike", () => {
    const record = execFits("/x", ["x"], { A: "1", B: Buffer.from("2") }, limits);
    const map = execFits(
      "/x",
      ["x"],
      new Map([
        ["A", "1"],
        ["B", "2"],
      ]),
      limits,
    );
    const pairs = execFits("/x", ["x"], ["A=1", Buffer.from("B=2")], limits);
    expect(map.footprint).toBe(record.footprint);
    expect(pairs.footprint).toBe(record.footprint);
  });

  it("measures non-ASCII in UTF-8 bytes, not UTF-16 units", () => {
    const fit = execFits("/é", ["é"], { É: "日本" }, limits);
    expect(fit.filenameBytes).toBe(4);
    expect(fit.argvBytes).toBe(3);
    expect(fit.envBytes).toBe(2 + 1 + 6 + 1);
  });
});

describe("footprintOf", () => {
  it("gives execFits' verdict for entries already validated, for every env shape", () => {
    const text = fc.string({ unit: "grapheme", maxLength: 40 }).filter((t) => !t.includes("\0"));
    const name = fc
      .string({ unit: "grapheme-ascii", minLength: 1, maxLength: 12 })
      .filter((n) => !n.includes("=") && !n.includes("\0"));
    fc.assert(
      fc.property(
        fc.array(text, { minLength: 1, maxLength: 6 }),
        fc.dictionary(name, text, { maxKeys: 12 }),
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 1, max: 60 }),
        (argv, record, execLimit, maxArgStrlen) => {
          const limits = { execLimit, maxArgStrlen };
          const pairs = Object.entries(record).map(([n, v]) => `${n}=${v}`);
          for (const env of [record, new Map(Object.entries(record)), pairs]) {
            const expected = execFits("/bin/x", argv, env, limits);
            expect(footprintOf("/bin/x", argv, envEntries(env), limits)).toEqual(expected);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
