import { describe, expect, it } from "vitest";
import { nativeStatus, spawn } from "../../src/index.js";
import { behaviourSuite } from "./behaviour-suite.js";

// Read once when the engine is made (at the first spawn of this worker
// process): every spawn in this file takes the addon's own child path.
process.env["EXACTSPAWN_CHILD_PATH"] = "1";

describe("native engine, child path forced", () => {
  it("is loaded and really takes the child path", async () => {
    expect(nativeStatus().loaded).toBe(true);
    // Only the child path names "execve"; posix_spawn names itself.
    const error = await spawn("/nonexistent/program").then(
      () => undefined,
      (e: unknown) => e as { syscall?: string },
    );
    expect(error?.syscall).toBe("execve");
  });
});

behaviourSuite("child-path");
