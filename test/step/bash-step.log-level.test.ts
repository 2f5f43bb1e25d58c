/**
 * The library's default logger (pino JSON lines on stderr, level from
 * EXACTSPAWN_LOG_LEVEL) at trace, in a separate host process that runs steps
 * with warnings, drops, trims, a failure and a spill-write failure: the
 * notices are there (names and sizes), the sentinel marker in every value is
 * not.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const fixture = fileURLToPath(new URL("../fixtures/sentinel-log.mjs", import.meta.url));
const SENTINEL = "SENTINEL-5e17";

// The fixture imports the compiled package; test/global-setup.ts compiles it when stale.
describe("EXACTSPAWN_LOG_LEVEL=trace", () => {
  it("logs names and sizes, never a value", async () => {
    const { stdout, stderr } = await run(process.execPath, [fixture, SENTINEL], {
      env: { ...process.env, EXACTSPAWN_LOG_LEVEL: "trace" },
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(stdout.trim()).toBe("done");
    const lines = stderr.trim().split("\n");
    const events = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const names = events.flatMap((event) => [
      String(event["variable"]),
      String(event["step"]),
      ...((event["names"] as string[] | undefined) ?? []),
    ]);
    expect(names).toEqual(expect.arrayContaining(["HUGE_INHERITED", "_", "s"]));
    expect(names.some((name) => name.startsWith("INHERITED_"))).toBe(true);
    expect(stderr).not.toContain(SENTINEL);
  });
});
