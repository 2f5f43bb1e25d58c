/**
 * What a limit did (issue 36, items 2 and 3), driven with a fake engine: a
 * cgroup-contained step's `contained.limitEvents` (on the result and on the
 * SubprocessError), the failure it names — "oom" whatever the leader's exit,
 * "limit" for a failed step whose tree met pids.max or the OOM killer, no
 * failure from throttling or reclaim — and the step's log event. The kernel
 * side (the counts really counted) runs in the kernel VM tier.
 */
import { describe, expect, it } from "vitest";
import { type ContainedReport, type LimitEvents, SubprocessError } from "../../src/index.js";
import type { RawTreeUsage } from "../../src/native.js";
import { type Engine, type EngineExit, limitEventsOf } from "../../src/spawn/engine.js";
import { Subprocess } from "../../src/spawn/subprocess.js";
import { logStepEnd } from "../../src/step/step-identity.js";
import { captureLog } from "../helpers/capture-log.js";

const CGROUP: ContainedReport = Object.freeze({
  mechanism: "cgroup",
  cgroupParent: "/sys/fs/cgroup/host",
  limits: { pidsMax: 20, memoryMax: 64 << 20 },
  limitEvents: null,
});
/** The addon's tree where no controller is enabled: every count null. */
const BARE: RawTreeUsage = {
  userCpuMicros: 1,
  systemCpuMicros: 2,
  memoryPeakBytes: null,
  oomKills: null,
  memoryMaxEvents: null,
  oomEvents: null,
  pidsMaxEvents: null,
  cpuThrottledMicros: null,
  cpuThrottledPeriods: null,
};
const PID_NAMESPACE: ContainedReport = Object.freeze({
  mechanism: "pid-namespace",
  userNamespace: false,
  limitEvents: null,
});

const NONE: LimitEvents = {
  pidsMax: 0,
  memoryMax: 0,
  oom: 0,
  oomKill: 0,
  cpuThrottledMicros: 0,
  cpuThrottledPeriods: 0,
};

/** What a cgroup whose controllers are all off counts: nothing. */
const UNCOUNTED = {
  pidsMax: null,
  memoryMax: null,
  oom: null,
  oomKill: null,
  cpuThrottledMicros: null,
  cpuThrottledPeriods: null,
};

/** Runs a step whose engine delivers `exit` at once. */
function run(exit: Partial<EngineExit>, contained: ContainedReport | null, reject: boolean) {
  const engine: Engine = {
    native: true,
    start(_request, onExit) {
      queueMicrotask(() =>
        onExit({ exitCode: 0, signal: null, resourceUsage: null, output: [], ...exit }),
      );
      return {
        pid: 4242,
        streams: [null, null, null],
        captured: [],
        takeOver: () => null,
        kill: () => 0,
        killGroup: () => 0,
        endNow: () => ({ byDeadline: false, leaderRunning: false, at: null }),
        ending: () => null,
        endCaptureAtExit: () => {},
        ref: () => {},
        unref: () => {},
      };
    },
  };
  return new Subprocess(
    engine,
    {
      file: "/bin/sh",
      argv: ["sh", "-c", "step"],
      entries: [],
      cwd: undefined,
      stdio: ["ignore", "ignore", "ignore"],
      setsid: false,
      setpgroup: false,
    },
    {
      encoding: "utf8",
      buffer: true,
      maxBuffer: 1024,
      timeout: undefined,
      killSignal: 15,
      killGraceMs: 5,
      signal: undefined,
      reject,
      input: undefined,
      ownGroup: false,
      ref: true,
      contained,
    },
  );
}

describe("limitEventsOf: the addon's tree usage as the report's names", () => {
  it("maps each count, null where the kernel did not say", () => {
    const tree: RawTreeUsage = {
      userCpuMicros: 1,
      systemCpuMicros: 2,
      memoryPeakBytes: 3,
      oomKills: 4,
      memoryMaxEvents: 5,
      oomEvents: 6,
      pidsMaxEvents: 7,
      cpuThrottledMicros: 8,
      cpuThrottledPeriods: 9,
    };
    expect(limitEventsOf({ tree })).toEqual({
      pidsMax: 7,
      memoryMax: 5,
      oom: 6,
      oomKill: 4,
      cpuThrottledMicros: 8,
      cpuThrottledPeriods: 9,
    });
    expect(limitEventsOf({ tree: BARE })).toEqual(UNCOUNTED);
    expect(limitEventsOf({})).toBeUndefined();
  });
});

describe("a contained step's limit events and failure", () => {
  it('an OOM kill of a child while the leader exits 0: rejected by default as "oom"', async () => {
    const limitEvents = { ...NONE, memoryMax: 40, oom: 1, oomKill: 1 };
    const error = await run({ exitCode: 0, limitEvents }, CGROUP, true).then(
      () => null,
      (e: unknown) => e,
    );
    expect(SubprocessError.is(error)).toBe(true);
    expect(error).toMatchObject({ failure: "oom", exitCode: 0, signal: null });
    expect((error as SubprocessError).contained).toEqual({ ...CGROUP, limitEvents });
    const result = await run({ exitCode: 0, limitEvents }, CGROUP, false);
    expect(result.failure).toBe("oom");
    expect(result.contained).toEqual({ ...CGROUP, limitEvents });
  });

  it('a failed step whose forks were refused at pids.max: "limit"', async () => {
    const limitEvents = { ...NONE, pidsMax: 3 };
    const error = await run({ exitCode: 254, limitEvents }, CGROUP, true).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ failure: "limit", exitCode: 254 });
    expect((error as Error).message).toMatch(
      /^Command failed with exit code 254 after its contained tree met a limit/,
    );
    const signalled = await run({ exitCode: null, signal: "SIGSEGV", limitEvents }, CGROUP, false);
    expect(signalled.failure).toBe("limit");
    // The OOM killer invoked without a kill (nothing it could end) is a limit too.
    const oom = await run({ exitCode: 1, limitEvents: { ...NONE, oom: 1 } }, CGROUP, false);
    expect(oom.failure).toBe("limit");
  });

  it("a step that succeeds despite refused forks succeeds; throttling and reclaim name no failure", async () => {
    const refused = await run({ exitCode: 0, limitEvents: { ...NONE, pidsMax: 3 } }, CGROUP, true);
    expect(refused.failure).toBeNull();
    expect(refused.contained?.limitEvents).toMatchObject({ pidsMax: 3 });
    const slowed = { ...NONE, memoryMax: 12, cpuThrottledMicros: 900_000, cpuThrottledPeriods: 9 };
    const failed = await run({ exitCode: 1, limitEvents: slowed }, CGROUP, false);
    expect(failed.failure).toBe("exit");
    expect(failed.contained?.limitEvents).toEqual(slowed);
  });

  it("null where the controller is not enabled; null for a PID namespace; none uncontained", async () => {
    const bare = limitEventsOf({ tree: BARE });
    const inCgroup = await run({ exitCode: 0, limitEvents: bare }, CGROUP, true);
    expect(inCgroup.contained?.limitEvents).toEqual(UNCOUNTED);
    expect((await run({ exitCode: 0 }, PID_NAMESPACE, true)).contained).toEqual(PID_NAMESPACE);
    expect((await run({ exitCode: 0 }, null, true)).contained).toBeNull();
  });

  it("the step's log events carry the failure and the counts", async () => {
    const limitEvents = { ...NONE, oom: 1, oomKill: 1 };
    const log = captureLog();
    const error = await run({ exitCode: 0, limitEvents }, CGROUP, true).then(
      () => null,
      (e: unknown) => e,
    );
    logStepEnd(log.logger, "bash", 4242, performance.now(), { ok: false, error });
    const value = await run({ exitCode: 0, limitEvents }, CGROUP, false);
    logStepEnd(log.logger, "bash", 4242, performance.now(), { ok: true, value });
    const [endRejected, failed, endResolved] = log.events();
    expect(endRejected).toMatchObject({
      event: "step.end",
      ok: false,
      failure: "oom",
      exitCode: 0,
      limitEvents,
    });
    expect(failed).toMatchObject({ event: "step.failed", failure: "oom" });
    expect(endResolved).toMatchObject({
      event: "step.end",
      ok: false,
      failure: "oom",
      limitEvents,
    });
  });
});
