/**
 * What each reaped child cost, on the result of spawn, spawnSync and
 * runtime.bash and on their SubprocessError: user and system CPU time and
 * peak RSS, from the reap's wait4 rusage. The child is a Node process that
 * touches 96 MiB more than the host's own peak (at least 160 MiB) and burns CPU;
 * its peak must show (at least what it touched), and a /bin/true, whose peak is far below the host's, reports
 * null rather than the host's high-water mark (docs/spawn.md).
 */
import { describe, expect, it } from "vitest";
import {
  createRuntime,
  nativeStatus,
  type ResourceUsage,
  SubprocessError,
  spawn,
  spawnSync,
} from "../../src/index.js";

// Above the host's own peak (an ASan build's host holds far more than usual),
// with room for the host to grow before the reap; no more, since each child
// touches all of it (400 MiB and 5e7 rounds cost ~4 s a child on a busy 2-core machine).
const MIB = Math.max(160, Math.ceil(process.resourceUsage().maxRSS / 1024) + 96);
const HUNGRY = `const b = Buffer.alloc(${MIB} * 1024 * 1024, 1); let s = 0; for (let i = 0; i < 5e6; i++) s += i ^ b[i & 1023]; process.exitCode = Number(process.argv[1] ?? 0);`;

function expectHungry(usage: ResourceUsage | null) {
  expect(usage).not.toBeNull();
  expect(usage!.userCpuMicros).toBeGreaterThan(10_000);
  expect(usage!.systemCpuMicros).toBeGreaterThan(0);
  expect(usage!.maxRssKiB).not.toBeNull();
  expect(usage!.maxRssKiB!).toBeGreaterThanOrEqual(MIB * 1024);
  expect(usage!.maxRssKiB!).toBeLessThan(4 * MIB * 1024);
}

describe.runIf(nativeStatus().loaded)("resourceUsage of a reaped child", () => {
  const node = process.execPath;

  it("spawn: CPU and peak RSS, on the result and on the error", async () => {
    const result = await spawn(node, ["-e", HUNGRY]);
    expectHungry(result.resourceUsage);
    const error = await spawn(node, ["-e", HUNGRY, "3"]).result.catch((e: unknown) => e);
    expect(SubprocessError.is(error)).toBe(true);
    expectHungry((error as SubprocessError).resourceUsage);
  });

  it("spawnSync: the same, on the result and on the error", () => {
    expectHungry(spawnSync(node, ["-e", HUNGRY]).resourceUsage);
    let error: unknown;
    try {
      spawnSync(node, ["-e", HUNGRY, "3"]);
    } catch (e) {
      error = e;
    }
    expectHungry((error as SubprocessError).resourceUsage);
  });

  it("runtime.bash: the step's cost includes what bash waited for", async () => {
    const runtime = createRuntime();
    const step = await runtime.bash(`"$NODE" -e "$HUNGRY"`, {
      extra: { NODE: node, HUNGRY },
    });
    expectHungry(step.resourceUsage);
  });

  it("reports null, not the host's high-water mark, for a child smaller than the host", async () => {
    const result = await spawn("/bin/true");
    expect(result.resourceUsage!.maxRssKiB).toBeNull();
    expect(spawnSync("/bin/true").resourceUsage!.maxRssKiB).toBeNull();
  });
});
