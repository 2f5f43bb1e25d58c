/**
 * spawnSync's ending sends killSignal to the child's whole process group,
 * not only to the leader: a grandchild that traps SIGTERM records it. The
 * older test ("a timeout kills the whole process group") stayed green with
 * the signal sent to the leader only, since the SIGKILL the group gets at
 * the leader's exit took the grandchild anyway (issue 27, item 9). Here the
 * leader waits for the grandchild on SIGTERM, so only a group signal lets
 * the run end before the grace, and only a group SIGTERM reaches the trap.
 *
 * The ending is begun by output over maxBuffer, which takes the same path
 * as a timeout (native/core/run_sync.cc, begin_ending) and happens exactly
 * when the leader writes, after the grandchild said it is ready: no timer
 * decides the test.
 *
 * Seen red with `npm run test:mutants -- --only spawn-sync-group-kill`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nativeStatus, spawnSync } from "../../src/index.js";

const native = nativeStatus().loaded;
// Made only where the test runs (a skipped file runs no afterAll).
const dir = native ? mkdtempSync(join(tmpdir(), "exactspawn-sync-group-")) : "/nonexistent";
afterAll(() => {
  if (native) rmSync(dir, { recursive: true, force: true });
});

// $1: the directory, $2: the grandchild's script. The grandchild records SIGTERM in "term" and says it is
// ready through the FIFO "ready"; the leader then writes past maxBuffer and,
// on SIGTERM, waits for the grandchild before it exits.
const GRANDCHILD = `trap 'echo TERM > "$1/term"; exit 0' TERM; echo ready > "$1/ready"; /bin/sleep 1000 & wait`;
const LEADER = `mkfifo "$1/ready"
/bin/bash -c "$2" grandchild "$1" &
read line < "$1/ready"
trap 'wait; exit 0' TERM
head -c 64 /dev/zero
wait`;

describe.runIf(native)("spawnSync: killSignal reaches the whole group", () => {
  it("a grandchild that traps SIGTERM records it", () => {
    const result = spawnSync("/bin/bash", ["-c", LEADER, "leader", dir, GRANDCHILD], {
      maxBuffer: 16,
      killSignal: "SIGTERM",
      killGraceMs: 2000,
      processGroup: true,
      reject: false,
    });
    expect(result.failure).toBe("maxBuffer");
    expect(existsSync(join(dir, "term"))).toBe(true);
    expect(readFileSync(join(dir, "term"), "utf8")).toBe("TERM\n");
    // The leader ended on its own after the grandchild, not by the grace's SIGKILL.
    expect(result).toMatchObject({ exitCode: 0, signal: null });
  });
});
