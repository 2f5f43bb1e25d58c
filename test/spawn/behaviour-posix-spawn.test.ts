import { describe, expect, it } from "vitest";
import { nativeStatus, spawn } from "../../src/index.js";
import { behaviourSuite } from "./behaviour-suite.js";

// Read once when the engine is made (at the first spawn of this worker
// process): every spawn in this file without exec controls takes posix_spawn.
process.env["EXACTSPAWN_CHILD_PATH"] = "posix_spawn";

describe("native engine, posix_spawn asked for", () => {
  it("is loaded and really takes posix_spawn", async () => {
    expect(nativeStatus().loaded).toBe(true);
    // Only posix_spawn names itself; the child path reports the execve.
    const error = await spawn("/nonexistent/program").then(
      () => undefined,
      (e: unknown) => e as { syscall?: string },
    );
    expect(error?.syscall).toBe("posix_spawn");
  });
});

behaviourSuite("posix-spawn");
