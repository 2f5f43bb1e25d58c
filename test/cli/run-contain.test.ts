/**
 * `exactspawn run --contain` (docs/cli.md, docs/containment.md): a step's
 * `setsid` daemon is gone when the command returns; where the host cannot
 * contain, --contain refuses with exit status 125.
 */
import { afterEach, describe, expect, it } from "vitest";
import { cgroupSupport, nativeStatus } from "../../src/index.js";
import { LeftBehind, seen, stillRunning } from "../fixtures/process-state.js";
import { cli } from "../helpers/run-cli.js";

const left = new LeftBehind();
afterEach(() => left.killAll());
const canContain = nativeStatus().loaded && cgroupSupport().available && process.getuid?.() === 0;

// The leader hands the daemon's pid on through a pipe it reads, so it is
// printed before the leader exits.
const STEP = `exec 4>&1; { setsid sh -c 'echo $$; exec sleep 1000' & } | { read -r p; echo $p >&4; }`;

describe.runIf(canContain)("exactspawn run --contain", () => {
  it("ends the step's setsid daemon with the step", () => {
    const run = cli(["run", "--contain", "--", STEP], { env: { EXACTSPAWN_NATIVE: "required" } });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const pid = Number(run.stdout.trim());
    left.add(pid);
    expect(pid).toBeGreaterThan(0);
    expect(stillRunning(seen(pid))).toBe(false);
  });
});
