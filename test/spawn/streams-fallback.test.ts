import { describe, expect, it } from "vitest";
import { nativeStatus } from "../../src/index.js";
import { useQuietFallback } from "../helpers/quiet-fallback.js";
import { streamsSuite } from "./streams-suite.js";

useQuietFallback();

describe("fallback engine", () => {
  it("is in use", () => {
    expect(nativeStatus().loaded).toBe(false);
  });
});

streamsSuite("fallback");
