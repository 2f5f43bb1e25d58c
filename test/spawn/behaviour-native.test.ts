import { describe, expect, it } from "vitest";
import { nativeStatus, spawn } from "../../src/index.js";
import { behaviourSuite } from "./behaviour-suite.js";

describe("native engine", () => {
  it("is loaded and takes the addon's own child path by default", async () => {
    expect(nativeStatus().loaded).toBe(true);
    // Only the child path names "execve"; posix_spawn names itself.
    const error = await spawn("/nonexistent/program").then(
      () => undefined,
      (e: unknown) => e as { syscall?: string },
    );
    expect(error?.syscall).toBe("execve");
  });
});

behaviourSuite("native");
