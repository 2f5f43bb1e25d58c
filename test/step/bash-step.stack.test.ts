/**
 * The plan adapts to the host's stack limit: a host node process started
 * under `ulimit -s 1024` and under `ulimit -s unlimited` (test/fixtures/
 * stack-steps.mjs, importing the compiled dist/) runs the same batch of large
 * steps. Under both, no step fails (no E2BIG) and every value comes back
 * byte-identical; with the native probe the spilled counts differ (a 256 KiB
 * exec limit against 6 MiB). The fallback project probes the 256 KiB floor
 * whatever the stack, so there the counts are equal by design.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const fixture = fileURLToPath(new URL("../fixtures/stack-steps.mjs", import.meta.url));

interface StackReport {
  readonly source: string;
  readonly stackSoft: number | string | null;
  readonly execLimit: number;
  readonly steps: readonly { spilled: number | null; identical: boolean; error: string | null }[];
}

async function underStack(stack: string): Promise<StackReport> {
  const { stdout } = await run(
    "bash",
    ["-c", `ulimit -s ${stack} && exec "${process.execPath}" "${fixture}"`],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as StackReport;
}

// The fixture imports the compiled package; test/global-setup.ts compiles it when stale.
describe("stack limits", () => {
  it("1 MiB and unlimited: no E2BIG, every value identical, the plan adapts", async () => {
    const [small, unlimited] = await Promise.all([underStack("1024"), underStack("unlimited")]);
    for (const report of [small, unlimited]) {
      expect(report.steps).toHaveLength(4);
      for (const step of report.steps) expect(step).toMatchObject({ error: null, identical: true });
    }
    const counts = (report: StackReport) => report.steps.map((s) => s.spilled);
    if (small.source === "native") {
      expect(small.stackSoft).toBe(1024 * 1024);
      expect(unlimited.stackSoft).toBe("unlimited");
      expect(small.execLimit).toBeLessThan(unlimited.execLimit);
      expect(counts(small)).not.toEqual(counts(unlimited));
      // Every step spills at least as much under the smaller limit.
      small.steps.forEach((step, i) => {
        expect(step.spilled!).toBeGreaterThanOrEqual(unlimited.steps[i]!.spilled!);
      });
    } else {
      expect(counts(small)).toEqual(counts(unlimited));
    }
  });
});
