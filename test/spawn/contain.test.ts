/**
 * Contained steps (docs/containment.md), with real processes: a bash step
 * starts three escapers — a `setsid` daemon, a double fork and a `nohup`
 * job — and prints their pids; the test records each (pid + start time,
 * process-state.ts) while it runs, then ends the step by leader exit 0,
 * timeout or abort. Once the step has settled none may be alive: the step
 * settles only when its cgroup is empty. Without containment the escapers
 * outlive the step (the control).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import {
  ContainmentError,
  cgroupSupport,
  nativeStatus,
  spawn,
  spawnSync,
} from "../../src/index.js";
import { hostSubtree } from "../fixtures/cgroup-subtree.js";
import { LeftBehind, openFds, seen, stillRunning } from "../fixtures/process-state.js";
import { runWithEscapers } from "./escapers.js";

const support = cgroupSupport();
const canContain = nativeStatus().loaded && support.available && process.getuid?.() === 0;
const left = new LeftBehind();
afterEach(() => left.killAll());

/**
 * Each escaper prints its own pid, then becomes a `sleep 1000` (holding
 * stdout open when `hold`, else on /dev/null so that an uncontained run can
 * settle while they live).
 */
const escapers = (hold: boolean) => {
  const out = hold ? "" : " >/dev/null";
  return `
setsid sh -c 'echo $$; exec sleep 1000${out}' &
(sh -c 'echo $$; exec sleep 1000${out}' &)
nohup sh -c 'echo $$; exec sleep 1000${out}' 2>/dev/null &
`;
};
const ESCAPERS = escapers(false);

function stepCgroups(): string[] {
  const dir = hostSubtree(support.parent as string, process.pid);
  if (dir === undefined || !existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

describe.runIf(canContain)("contain: escapers die with the step (cgroup v2, as root)", () => {
  it("leader exit 0: the setsid daemon, the double fork and the nohup job are gone when it settles", async () => {
    const { escapers, result } = await runWithEscapers(
      left,
      ESCAPERS,
      "read -r _; exit 0",
      { contain: true },
      (child) => child.stdin!.end("go\n"),
    );
    expect(escapers).toHaveLength(3);
    expect(escapers.filter(stillRunning)).toEqual([]);
    expect(result).toMatchObject({
      exitCode: 0,
      failure: null,
      contained: { mechanism: "cgroup", cgroupParent: support.parent },
    });
    expect(stepCgroups()).toEqual([]);
  });

  it("timeout: every escaper is gone when the timed-out step settles", async () => {
    const { escapers, result } = await runWithEscapers(
      left,
      ESCAPERS,
      "exec sleep 1000",
      { contain: true, timeout: 5000, killGraceMs: 100 },
      () => {},
    );
    expect(escapers).toHaveLength(3);
    expect(escapers.filter(stillRunning)).toEqual([]);
    expect(result).toMatchObject({ failure: "timeout" });
    expect(stepCgroups()).toEqual([]);
  });

  it("abort: every escaper is gone when the aborted step settles", async () => {
    const abort = new AbortController();
    const { escapers, result } = await runWithEscapers(
      left,
      ESCAPERS,
      "exec sleep 1000",
      { contain: true, signal: abort.signal, killGraceMs: 100 },
      () => abort.abort(),
    );
    expect(escapers).toHaveLength(3);
    expect(escapers.filter(stillRunning)).toEqual([]);
    expect(result).toMatchObject({ failure: "abort" });
    expect(stepCgroups()).toEqual([]);
  });

  it("the control: uncontained, the escapers outlive a leader that exits 0", async () => {
    const { escapers, result } = await runWithEscapers(
      left,
      ESCAPERS,
      "read -r _; exit 0",
      {},
      (child) => child.stdin!.end("go\n"),
    );
    expect(result).toMatchObject({ exitCode: 0, contained: null });
    expect(escapers.filter(stillRunning)).toHaveLength(3);
  });

  it("spawnSync: the escapers are gone when it returns, and its output ends with the tree", () => {
    // The leader reads the three pids from a pipe before it exits; the
    // escapers then hold stdout (fd 4): without containment spawnSync would
    // not return before they end.
    const script = `exec 4>&1
{ ${escapers(false).replaceAll(">/dev/null", ">&4")} } | { read -r a; read -r b; read -r c; echo "$a $b $c" >&4; }
echo leader`;
    const run = spawnSync("/bin/bash", ["-c", script], {
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
      contain: true,
      stdio: ["ignore", "pipe", "ignore"],
    });
    const [pidLine, leader] = run.stdout.trim().split("\n");
    expect(leader).toBe("leader");
    const pids = pidLine!.split(" ").map(Number);
    expect(pids.filter((pid) => pid > 0)).toHaveLength(3);
    // Dead before spawnSync returned: their /proc entries are gone or zombies.
    for (const pid of pids) expect(stillRunning(seen(pid))).toBe(false);
    expect(run.contained).toMatchObject({ mechanism: "cgroup" });
    expect(stepCgroups()).toEqual([]);
  });

  it("resourceUsage covers the tree: a setsid grandchild's ~400 ms of CPU counts", async () => {
    // The burner is orphaned at once (its parent subshell exits), so the
    // leader's wait4 never includes it; the leader waits for its output only.
    const burn = `${process.execPath} -e 'const t = process.cpuUsage(); while (process.cpuUsage(t).user < 400000);'`;
    const script = `x=$( (setsid sh -c "${burn}; echo done" &) ); echo "$x"`;
    const env = { PATH: process.env["PATH"] ?? "/usr/bin:/bin" };
    const contained = await spawn("/bin/bash", ["-c", script], { env, contain: true });
    expect(contained.stdout.trim()).toBe("done");
    const tree = contained.resourceUsage!;
    expect(tree.userCpuMicros + tree.systemCpuMicros).toBeGreaterThanOrEqual(400_000);
    const plain = await spawn("/bin/bash", ["-c", script], { env });
    const leader = plain.resourceUsage!;
    expect(leader.userCpuMicros + leader.systemCpuMicros).toBeLessThan(400_000);
  });

  it("refuses pidsMax and memoryMax where the controller is not delegated (fails closed)", async () => {
    if (support.controllers.includes("pids") || support.controllers.includes("memory")) return;
    for (const contain of [{ pidsMax: 16 }, { memoryMax: 64 * 1024 * 1024 }]) {
      const error = await spawn("/bin/true", [], { contain }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ContainmentError);
      expect(error).toMatchObject({ code: "ERR_EXACTSPAWN_CONTAINMENT_CONTROLLER" });
      expect((error as ContainmentError).missing[0]).toMatch(/^controller (pids|memory)$/);
      expect(() => spawnSync("/bin/true", [], { contain })).toThrow(ContainmentError);
    }
    // best-effort runs contained, without the limit it cannot apply.
    const run = await spawn("/bin/true", [], { contain: "best-effort" });
    expect(run.contained).toEqual({
      mechanism: "cgroup",
      cgroupParent: support.parent,
      limits: {},
      limitEvents: expect.any(Object),
    });
  });

  it("the result and spawnSync's carry limitEvents: a count where the parent delegates the controller, else null", async () => {
    // Every delegated controller is enabled in the host's sub-tree from its
    // first step, whatever the step asked (docs/containment.md).
    const has = (controller: string) => support.controllers.includes(controller);
    const shape = (controller: string) => (has(controller) ? expect.any(Number) : null);
    const expected = {
      pidsMax: shape("pids"),
      memoryMax: shape("memory"),
      oom: shape("memory"),
      oomKill: shape("memory"),
      cpuThrottledMicros: shape("cpu"),
      cpuThrottledPeriods: shape("cpu"),
    };
    const run = await spawn("/bin/true", [], { contain: true });
    const sync = spawnSync("/bin/true", [], { contain: true });
    for (const result of [run, sync]) {
      expect(result.contained).toMatchObject({ mechanism: "cgroup", limitEvents: expected });
      // (With the controller, a number from Linux 5.19, which added memory.peak.)
      if (!has("memory")) expect(result.resourceUsage?.memoryPeakBytes).toBeNull();
    }
  });

  it("500 concurrent contained steps leave no cgroup, fd or thread behind", async () => {
    const threads = () =>
      Number(/^Threads:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"))![1]);
    // One spawn first: the watchdog, the event thread and the sub-tree exist from then on.
    await spawn("/bin/true", [], { contain: true });
    const fdsBefore = openFds().length;
    const threadsBefore = threads();
    const runs = await Promise.all(
      Array.from({ length: 500 }, () =>
        spawn("/bin/sh", ["-c", "sleep 1000 & echo $!"], { contain: true }),
      ),
    );
    const sleepers = runs.map((r) => Number(r.stdout.trim()));
    expect(new Set(sleepers).size).toBe(500);
    expect(stepCgroups()).toEqual([]);
    expect(openFds().length).toBe(fdsBefore);
    expect(threads()).toBe(threadsBefore);
  });
});

describe.runIf(nativeStatus().loaded && !support.available)(
  "contain where this host cannot",
  () => {
    it("refuses with a ContainmentError naming what is missing; best-effort runs uncontained", async () => {
      await expect(spawn("/bin/true", [], { contain: true })).rejects.toBeInstanceOf(
        ContainmentError,
      );
      const run = await spawn("/bin/true", [], { contain: "best-effort" });
      expect(run.contained).toBeNull();
    });
  },
);

describe.runIf(!nativeStatus().loaded)("contain on the child_process fallback", () => {
  it("refuses contain: true (missing the native engine); best-effort runs uncontained", async () => {
    const error = await spawn("/bin/true", [], { contain: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ContainmentError);
    expect(error).toMatchObject({ missing: ["native engine"] });
    expect(() => spawnSync("/bin/true", [], { contain: true })).toThrow(ContainmentError);
    const run = await spawn("/bin/true", [], { contain: "best-effort" });
    expect(run.contained).toBeNull();
  });
});
