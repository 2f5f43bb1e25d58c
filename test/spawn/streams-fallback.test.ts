import { afterAll, describe, expect, it } from "vitest";
import { disableNative, type Logger, nativeStatus, setLogger } from "../../src/index.js";
import { streamsSuite } from "./streams-suite.js";

// This file runs in its own worker process (forks pool), so turning the addon
// off here does not affect the native suite.
disableNative();
const quiet = () => {};
setLogger({
  warn: quiet,
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

streamsSuite("fallback");
