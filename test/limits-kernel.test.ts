/**
 * The exact exec-size model against the real kernel: under four stack limits,
 * an environment that fills the limit to the byte execs, one byte more fails
 * with E2BIG, and execFits predicts both. Each case runs in a child process
 * started under `ulimit -s`, so the probe sees that limit.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { execLimitForStack, MAX_ARG_STRLEN } from "../src/limits.js";

const fixture = fileURLToPath(new URL("./fixtures/kernel-edge.mjs", import.meta.url));

interface Attempt {
  fits: boolean;
  footprint: number;
  overBy: number;
  oversized: Array<{ kind: string; name?: string; bytes: number }>;
  status: number | null;
  error: string | null;
}

interface Report {
  limits: { source: string; execLimit: number; stackSoft: number | string };
  edges: Array<{ pairBytes: number; exact: Attempt; oneMore: Attempt }>;
  single?: { at: Attempt; over: Attempt };
  longPath: { bytes: number; exact: Attempt; longer: Attempt };
}

function runUnderStack(stack: string): Report {
  const result = spawnSync(
    "bash",
    ["-c", `ulimit -s ${stack} && exec "${process.execPath}" "${fixture}" 102400,4096,100`],
    { encoding: "utf8", env: { ...process.env, EXACTSPAWN_NATIVE: "required" } },
  );
  if (result.status !== 0) throw new Error(`fixture failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Report;
}

const stacks: Array<[string, number | "unlimited"]> = [
  ["256", 256 * 1024],
  ["1024", 1024 * 1024],
  ["8192", 8 * 1024 * 1024],
  ["unlimited", "unlimited"],
];

describe.each(stacks)("under ulimit -s %s", (ulimit, stackBytes) => {
  const report = runUnderStack(ulimit);

  it("probes the stack limit natively and derives the kernel's limit", () => {
    expect(report.limits.source).toBe("native");
    expect(report.limits.stackSoft).toBe(stackBytes);
    expect(report.limits.execLimit).toBe(execLimitForStack(stackBytes));
  });

  it.each([102400, 4096, 100])("an env of %i-byte variables fills the limit exactly", (size) => {
    const edge = report.edges.find((e) => e.pairBytes === size)!;
    expect(edge.exact).toMatchObject({ fits: true, overBy: 0, status: 0, error: null });
    expect(edge.exact.footprint).toBe(report.limits.execLimit);
    expect(edge.oneMore).toMatchObject({ fits: false, overBy: 1, status: null, error: "E2BIG" });
  });

  it("counts the executable's path", () => {
    expect(report.longPath.bytes).toBeGreaterThan(3000);
    expect(report.longPath.exact).toMatchObject({ fits: true, status: 0, error: null });
    expect(report.longPath.longer).toMatchObject({ fits: false, overBy: 1, error: "E2BIG" });
  });
});

describe("the single-string limit (8 MiB stack)", () => {
  const report = runUnderStack("8192");

  it(`accepts a string of exactly ${MAX_ARG_STRLEN} bytes with its NUL`, () => {
    expect(report.single?.at).toMatchObject({ fits: true, status: 0, oversized: [] });
  });

  it("rejects one byte more, naming the variable and its size", () => {
    expect(report.single?.over).toMatchObject({
      fits: false,
      error: "E2BIG",
      oversized: [{ kind: "env", name: "S", bytes: MAX_ARG_STRLEN + 1 }],
    });
  });
});
