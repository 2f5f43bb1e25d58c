import { describe, expect, it } from "vitest";
import { nativeStatus } from "../../src/index.js";
import { useQuietFallback } from "../helpers/quiet-fallback.js";
import { behaviourSuite } from "./behaviour-suite.js";

// This file runs in its own worker process (forks pool), so turning the addon
// off here does not affect the native suite.
const warnings: unknown[][] = [];
useQuietFallback((...args) => warnings.push(args));

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
