import { describe, expect, it } from "vitest";
import { disableNative, nativeStatus } from "../../src/index.js";
import { behaviourSuite } from "./behaviour-suite.js";

// This file runs in its own worker process (forks pool), so turning the addon
// off here does not affect the native suite.
disableNative();

describe("fallback engine", () => {
  it("is in use", () => {
    expect(nativeStatus().loaded).toBe(false);
  });
});

behaviourSuite("fallback");
