/**
 * A contained step's limits as the kernel applies them (docs/containment.md):
 * the step reads its own cgroup's files (a controller's files exist only
 * when the sub-tree enabled it for its children), and a step over its
 * memory.max is reported as an OOM kill, not as a signal. Runs only where
 * the memory, pids and cpu controllers are delegated to the host's cgroup
 * (the kernel tier; this repository's usual hosts run cgroup2 beside the
 * v1 controllers and skip it).
 *
 * Meant red with the controllers never enabled (row
 * cgroup-controllers-enabled), cpu.max without its 1 ms floor (row
 * cgroup-cpu-max-floor, also seen red in contain-settings.test.ts), and the
 * OOM kill read from the wrong key or reported as a signal (rows
 * cgroup-oom-kill-read, oom-before-signal).
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cgroupSupport, nativeStatus, spawn } from "../../src/index.js";

const support = cgroupSupport();
const delegated = ["memory", "pids", "cpu"].every((c) => support.controllers.includes(c));
const canLimit =
  nativeStatus().loaded && support.available && delegated && process.getuid?.() === 0;

/** Prints the named files of the cgroup it runs in, one `name=value` a line. */
const READ_OWN_CGROUP = `
const fs = require("node:fs");
const own = fs.readFileSync("/proc/self/cgroup", "utf8").split("\\n").find((l) => l.startsWith("0::")).slice(3);
const line = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\\n").find((l) => l.split(" - ")[1]?.startsWith("cgroup2 "));
const dir = line.split(" ")[4] + own;
for (const name of process.argv.slice(1)) {
  let value;
  try { value = fs.readFileSync(dir + "/" + name, "utf8").trim(); } catch (e) { value = e.code; }
  console.log(name + "=" + value);
}
`;

describe.runIf(canLimit)("contain: limits the kernel applies", () => {
  it("the step's cgroup has the limits asked for (the controllers were enabled)", async () => {
    const result = await spawn(
      process.execPath,
      ["-e", READ_OWN_CGROUP, "memory.max", "pids.max", "cpu.max"],
      { contain: { memoryMax: 256 * 1024 * 1024, pidsMax: 64, cpuMax: 0.001 } },
    );
    expect(result.stdout.split("\n").filter(Boolean)).toEqual([
      `memory.max=${256 * 1024 * 1024}`,
      "pids.max=64",
      "cpu.max=1000 100000",
    ]);
  });

  it.runIf(existsSync("/usr/bin/perl"))(
    "a step over memory.max is an OOM kill, not a signal",
    async () => {
      const result = await spawn(
        "/usr/bin/perl",
        ["-e", '$x = "a" x (512 * 1024 * 1024); print length($x), "\\n";'],
        { contain: { memoryMax: 32 * 1024 * 1024 }, reject: false },
      );
      expect(result).toMatchObject({ failure: "oom", signal: "SIGKILL" });
      expect(result.contained?.limitEvents?.oomKill).toBeGreaterThan(0);
    },
  );
});
