/**
 * The short soak (`npm run soak -- --steps N`: 250 steps in `npm test`, 1,000
 * in `npm run test:long`): a host runs N bash steps with random values (a
 * share over the per-value cap, so they spill; a few over the whole budget)
 * at 16 in flight. Zero failures, every value read
 * back at its exact length, fds flat (end <= start + small slack), no zombie,
 * no spill directory left in its private TMPDIR. Runs in a child process on
 * the engine of the current vitest project. No timing assertion.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { byRun } from "./helpers/long.js";

const script = resolve(import.meta.dirname, "../scripts/soak.mjs");
const STEPS = byRun(250, 1000);

describe("soak (short variant)", () => {
  it(`${STEPS} bash steps: no failure, flat fds, no zombie, no leftover directory`, () => {
    const run = spawnSync(process.execPath, [script, "--steps", String(STEPS), "--json"], {
      encoding: "utf8",
      timeout: 600_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(run.signal).toBeNull();
    const summary = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}");
    const { curve: _curve, ...shown } = summary;
    console.log(`soak: ${JSON.stringify(shown)}`);
    expect(summary.failures).toEqual([]);
    expect(summary).toMatchObject({ steps: STEPS, ok: STEPS, failed: 0, leftoverDirs: 0 });
    expect(summary.spilledSteps).toBeGreaterThan(0);
    expect(summary.overBudgetSteps).toBeGreaterThan(0);
    expect(summary.end.zombies).toBe(0);
    expect(summary.end.fds).toBeLessThanOrEqual(summary.start.fds + 4);
    expect(run.status).toBe(0);
  });
});
