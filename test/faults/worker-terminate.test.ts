/**
 * Terminating a worker while it is inside spawn() must never take the host
 * down (issue 11, bug 1: node-addon-api rethrew a refused call as a C++
 * exception that ended in std::terminate, exit 134 within a few
 * terminations). The host also ends with no child left behind: children
 * still running at teardown go to the addon's reaper. On the fallback the
 * children of a terminated worker stay zombies until the host exits (the
 * worker's libuv loop was their only reaper; docs/fallback.md): there the
 * test checks the host survives and that nothing is left running.
 * The 300-termination run is `npm run soak:workers`.
 */
import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { nativeStatus } from "../../src/index.js";

const root = resolve(import.meta.dirname, "../..");

describe("workers terminated in the middle of spawn()", () => {
  it("leave the host alive, with no child and no zombie behind", () => {
    const run = spawnSync(process.execPath, [join(root, "test/fixtures/worker-churn.mjs"), "40"], {
      encoding: "utf8",
      timeout: 100_000,
    });
    // Before the fix: status 134, "terminate called after throwing an instance of 'Napi::Error'".
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const line = run.stdout.split("\n").find((l) => l.startsWith("REPORT "));
    const report = JSON.parse(line!.slice(7)) as {
      terminations: number;
      children: number;
      zombies: number;
      workerErrors: string[];
    };
    expect(report.workerErrors).toEqual([]);
    expect(report.terminations).toBe(40);
    if (nativeStatus().loaded) expect(report).toMatchObject({ children: 0, zombies: 0 });
    else expect(report.children).toBe(report.zombies);
  });
});
