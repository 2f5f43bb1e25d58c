/**
 * An ending reaches the whole group (docs/security.md, "Endings reach the
 * whole group"): `killSignal` goes to the child's process group, and SIGKILL
 * to what is left of it at the leader's exit, just before its reap. Here a
 * group member ignores SIGTERM (and holds no pipe, so nothing else waits for
 * it): once the aborted run settles it is gone, though the leader died of
 * the SIGTERM long before its grace ended. Seen red with the plan's
 * signal-at-exit 0 (row group-signal-at-exit-plan). Native engine: the
 * child_process fallback cannot (docs/fallback.md: `child_process` reaps
 * before JavaScript hears of the exit).
 */
import { afterEach, describe, expect, it } from "vitest";
import { nativeStatus, spawn, spawnSync } from "../../src/index.js";
import {
  eventually,
  type SeenProcess,
  seen,
  signalSeen,
  stillRunning,
} from "../fixtures/process-state.js";

const members: SeenProcess[] = [];
afterEach(() => {
  for (const member of members.splice(0)) signalSeen(member);
});

/** The leader starts a member that ignores SIGTERM, prints its pid, and waits. */
const LEADER =
  "sh -c 'trap \"\" TERM; echo $$; exec sleep 1000 >/dev/null' & wait; echo leader-not-ended";

describe.runIf(nativeStatus().loaded)("the rest of the group at the leader's exit", () => {
  it("spawn, aborted: the member that ignores SIGTERM is killed at the leader's exit", async () => {
    const abort = new AbortController();
    const child = spawn("/bin/sh", ["-c", LEADER], {
      processGroup: true,
      signal: abort.signal,
      killGraceMs: 60_000,
      reject: false,
      stdio: ["ignore", "pipe", "ignore"],
    });
    let member: SeenProcess | undefined;
    for await (const line of child.lines()) {
      member = seen(Number(line));
      break;
    }
    expect(member).toBeDefined();
    members.push(member!);
    abort.abort();
    const result = await child;
    expect(result).toMatchObject({ failure: "abort", signal: "SIGTERM" });
    expect(await eventually(() => !stillRunning(member), 10_000)).toBe(true);
  });

  it("spawnSync, timed out: the same", async () => {
    const result = spawnSync("/bin/sh", ["-c", LEADER], {
      processGroup: true,
      timeout: 1000,
      killGraceMs: 60_000,
      reject: false,
      stdio: ["ignore", "pipe", "ignore"],
    });
    expect(result).toMatchObject({ failure: "timeout", signal: "SIGTERM" });
    const member = seen(Number(result.stdout.trim()));
    expect(member).toBeDefined();
    members.push(member!);
    expect(await eventually(() => !stillRunning(member), 10_000)).toBe(true);
  });
});
