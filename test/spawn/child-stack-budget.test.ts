/**
 * `rlimits.stack` and the exec budget (issue 22, item 4). The kernel sizes a
 * child's argument area from the stack limit in force at its execve: the
 * child's own, set just before. The budget is measured against the smaller
 * of the host's and the requested soft limit, wherever the exec's fit is
 * checked (spawn, spawnSync, runtime.spawn), so such a spawn either fits or
 * is refused with the library's own error before anything starts, never
 * `execve E2BIG`. Seen red with the budget taken from the host's stack alone:
 * the 300 KB environment was spawned and failed with `execve E2BIG`, and
 * runtime.spawn trimmed nothing and failed the same way.
 */
import { describe, expect, it } from "vitest";
import { nativeStatus, SpawnError, spawn, spawnSync } from "../../src/index.js";
import { execLimitForStack, limitsWithChildStack, probeLimits } from "../../src/limits.js";
import { createRuntime } from "../../src/runtime.js";
import { zombieChildren } from "../fixtures/process-state.js";
import { captureLog } from "../helpers/capture-log.js";

const KIB = 1024;
const STACK = 512 * KIB;
/** Three variables of 100 KB each: 300 KB, far over the 128 KiB a 512 KiB stack allows. */
const big = Object.fromEntries(["A", "B", "C"].map((name) => [`BIG_${name}`, "x".repeat(100_000)]));

async function outcome(run: () => PromiseLike<unknown>): Promise<unknown> {
  try {
    return await run();
  } catch (error) {
    return error;
  }
}

describe("limitsWithChildStack", () => {
  const host = { execLimit: execLimitForStack(8 * 1024 * KIB), maxArgStrlen: 131_072 };
  it("takes the smaller of the host's limit and the requested stack's", () => {
    expect(limitsWithChildStack(host, STACK)).toEqual({ ...host, execLimit: 128 * KIB });
    expect(limitsWithChildStack(host, 2048 * KIB)).toEqual({ ...host, execLimit: 512 * KIB });
    // A larger or unlimited child stack does not raise the host's.
    expect(limitsWithChildStack(host, Number.POSITIVE_INFINITY)).toBe(host);
    expect(limitsWithChildStack(host, 64 * 1024 * KIB)).toBe(host);
    expect(limitsWithChildStack(host, undefined)).toBe(host);
  });
});

describe.runIf(nativeStatus().loaded)("rlimits.stack and the exec budget (native engine)", () => {
  it("refuses a 300 KB environment under a 512 KiB child stack before spawning, never E2BIG", async () => {
    // The contrast: under the host's own stack the same environment fits.
    expect(probeLimits().execLimit).toBeGreaterThan(400_000);
    expect((await spawn("/bin/true", [], { env: big })).exitCode).toBe(0);
    const options = { env: big, rlimits: { stack: STACK } };
    const error = await outcome(() => spawn("/bin/true", [], options));
    expect(error).toBeInstanceOf(SpawnError);
    expect(error).toMatchObject({ code: "ERR_EXACTSPAWN_EXEC_TOO_LARGE", limit: 128 * KIB });
    const syncError = await outcome(async () => spawnSync("/bin/true", [], options));
    expect(syncError).toBeInstanceOf(SpawnError);
    expect(zombieChildren()).toEqual([]);
  });

  it("still spawns what fits the child's own smaller stack", async () => {
    const env = { SMALL: "x".repeat(100_000) };
    const result = await spawn("/bin/sh", ["-c", "ulimit -s"], {
      env,
      rlimits: { stack: STACK },
    });
    expect(result.stdout).toBe("512\n");
  });

  it("runtime.spawn trims its environment to the child's stack instead of failing", async () => {
    const { logger } = captureLog();
    const runtime = createRuntime({
      inherit: "all",
      parentEnv: { PATH: "/usr/bin:/bin", ...big },
      logger,
    });
    const trimmed: string[] = [];
    const result = await runtime.spawn("/bin/sh", ["-c", "ulimit -s"], {
      rlimits: { stack: STACK },
      onTrim: (dropped) => trimmed.push(...dropped.map((d) => d.name)),
    });
    expect(result.stdout).toBe("512\n");
    expect(trimmed.length).toBeGreaterThanOrEqual(2);
  });
});
