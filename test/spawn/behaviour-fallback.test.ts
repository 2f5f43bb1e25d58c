import { afterAll, describe, expect, it } from "vitest";
import { disableNative, type Logger, nativeStatus, setLogger } from "../../src/index.js";
import { behaviourSuite } from "./behaviour-suite.js";

// This file runs in its own worker process (forks pool), so turning the addon
// off here does not affect the native suite.
disableNative();

const warnings: unknown[][] = [];
const quiet = () => {};
setLogger({
  warn: (...args: unknown[]) => warnings.push(args),
  error: quiet,
  info: quiet,
  debug: quiet,
  trace: quiet,
  fatal: quiet,
} as unknown as Logger);
afterAll(() => setLogger(undefined));

describe("fallback engine", () => {
  it("is in use", () => {
    expect(nativeStatus().loaded).toBe(false);
  });
});

behaviourSuite("fallback");

describe("fallback engine, afterwards", () => {
  it("warned exactly once, with the reason and no values", () => {
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings[0])).toContain("disabled by disableNative()");
  });
});
