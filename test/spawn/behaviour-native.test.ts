import { describe, expect, it } from "vitest";
import { nativeStatus } from "../../src/index.js";
import { behaviourSuite } from "./behaviour-suite.js";

describe("native engine", () => {
  it("is loaded", () => {
    expect(nativeStatus().loaded).toBe(true);
  });
});

behaviourSuite("native");
