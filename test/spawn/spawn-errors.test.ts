import { describe, expect, it } from "vitest";
import { SpawnError, SubprocessError } from "../../src/index.js";
import { execFits } from "../../src/limits.js";

describe("SpawnError", () => {
  it("names offenders and sizes, never values", () => {
    const fit = execFits("/bin/true", ["true"], { TOKEN: "s3cret".repeat(30_000) });
    const error = new SpawnError("/bin/true", fit, [
      { kind: "env", name: "TOKEN", bytes: 180_007 },
    ]);
    expect(error.code).toBe("ERR_EXACTSPAWN_EXEC_TOO_LARGE");
    expect(error.message).toContain("TOKEN (180007 bytes)");
    expect(error.message).not.toContain("s3cret");
  });
});

describe("SubprocessError", () => {
  const base = {
    argv: ["/bin/sh", "-c", "it's"],
    envNames: ["A", "B\n"],
    exitCode: null,
    signal: "SIGTERM",
    stdout: "x".repeat(10_000),
    stderr: null,
    durationMs: 5,
    resourceUsage: null,
  };

  it("describes each failure reason", () => {
    expect(new SubprocessError({ ...base, reason: "signal" }).message).toBe(
      "Command was killed with SIGTERM: /bin/sh (2 more argument(s), 8 bytes, in error.argv; " +
        "stdout 10000 bytes, tail in error.stdoutTail)",
    );
    expect(new SubprocessError({ ...base, reason: "timeout", timeoutMs: 10 }).message).toMatch(
      /timed out after 10 ms/,
    );
    expect(new SubprocessError({ ...base, reason: "abort" }).isCanceled).toBe(true);
  });

  it("keeps argv and tails on non-enumerable properties, escapes names and is brand-checkable", () => {
    const error = new SubprocessError({ ...base, reason: "exit", exitCode: 1, signal: null });
    expect(error.stdoutTail).toHaveLength(4096);
    expect(error.command).toBe("/bin/sh -c 'it'\\''s'");
    expect(error.program).toBe("/bin/sh");
    for (const key of ["argv", "command", "stdout", "stderr", "stdoutTail", "stderrTail"]) {
      expect(Object.getOwnPropertyDescriptor(error, key)?.enumerable).toBe(false);
    }
    expect(Object.keys(error)).not.toContain("stdoutTail");
    expect(error.envNames).toEqual(["A", "B\\n"]);
    expect(SubprocessError.is(error)).toBe(true);
    expect(SubprocessError.is(new Error("x"))).toBe(false);
    expect(error.code).toBe("ERR_EXACTSPAWN_SUBPROCESS_FAILED");
  });
});
