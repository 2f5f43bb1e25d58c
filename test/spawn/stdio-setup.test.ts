/**
 * What fds the child really has, for each stdio combination, on both ways of
 * starting it: posix_spawn (the default) and the addon's child path (taken
 * for any exec control; `umask` here, `uid` for its copy-on-write form). Both
 * run the one stdio plan (native/core/stdio_plan.h). The oracle is the kernel: the child lists
 * /proc/self/fd with readlink and FD_CLOEXEC (inspect fdlinks), compared
 * with what the host's own fds point to.
 */
import { closeSync, openSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus, spawn } from "../../src/index.js";
import type { StdioSlot } from "../../src/spawn/engine.js";
import { inspectBinary } from "../fixtures/build.js";

const native = nativeStatus().loaded;
const scratch = join(tmpdir(), `exactspawn-stdio-${process.pid}`);

let inspect: string;
let fileA: number;
let fileB: number;

beforeAll(() => {
  inspect = inspectBinary();
  fileA = openSync(`${scratch}-a`, "w");
  fileB = openSync(`${scratch}-b`, "w");
});

afterAll(() => {
  closeSync(fileA);
  closeSync(fileB);
  for (const suffix of ["-a", "-b", "-out"]) rmSync(`${scratch}${suffix}`, { force: true });
});

type Slot = StdioSlot | "A" | "B";

const COMBINATIONS: readonly (readonly Slot[])[] = [
  ["ignore", "ignore", "ignore"],
  ["inherit", "inherit", "inherit"],
  ["pipe", "pipe", "pipe"],
  ["A", "B", "A"],
  // Every source below the slot count and not its own slot: all parked first.
  [2, 0, 1],
  [1, 1, "ignore", "A"],
  ["ignore", "pipe", 2, "B", "ignore"],
  ["A", 0, "inherit", 1],
];

function resolved(slot: Slot): StdioSlot {
  return slot === "A" ? fileA : slot === "B" ? fileB : slot;
}

/** What slot i of the child must point to, read from the host's own fds. */
function expectedTarget(slot: Slot, index: number): string | RegExp {
  const source = resolved(slot);
  if (source === "ignore") return "/dev/null";
  if (source === "pipe") return /^pipe:\[\d+\]$/;
  return readlinkSync(`/proc/self/fd/${source === "inherit" ? index : source}`);
}

function label(slots: readonly Slot[]): string {
  return JSON.stringify(slots);
}

describe.runIf(native).each([
  ["posix_spawn", {}],
  ["the child path", { umask: 0o022 }],
  // A credential change: a copy-on-write child, whose start-status pipe must survive the plan.
  ["the copy-on-write child path", { uid: process.getuid!() }],
] as const)("the child's fds (%s)", (_path, extra) => {
  it.each(COMBINATIONS.map((slots) => [label(slots), slots] as const))(
    "stdio %s",
    async (_label, slots) => {
      const out = `${scratch}-out`;
      const result = await spawn(inspect, ["fdlinks", out], {
        stdio: slots.map(resolved),
        ...extra,
      });
      expect(result.exitCode).toBe(0);
      const lines = readFileSync(out, "utf8").trimEnd().split("\n");
      const seen = lines.map((line) => {
        const [fd, target, flag] = line.split(" ");
        return { fd: Number(fd), target, cloexec: flag === "+cloexec" };
      });
      expect(seen).toEqual(
        slots.map((slot, fd) => ({
          fd,
          target:
            typeof expectedTarget(slot, fd) === "string"
              ? expectedTarget(slot, fd)
              : expect.stringMatching(expectedTarget(slot, fd)),
          cloexec: false,
        })),
      );
    },
  );
});
