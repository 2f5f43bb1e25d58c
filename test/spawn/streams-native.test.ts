import { describe, expect, it } from "vitest";
import { nativeStatus } from "../../src/index.js";
import { streamsSuite } from "./streams-suite.js";

describe("native engine", () => {
  it("is loaded", () => {
    expect(nativeStatus().loaded).toBe(true);
  });
});

streamsSuite("native");
