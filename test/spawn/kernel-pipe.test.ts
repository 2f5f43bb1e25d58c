/**
 * The host's ends of a createPipe() pipe (src/spawn/kernel-pipe.ts,
 * native/core/pipe.cc): no other child of the host holds one (the ends are
 * close-on-exec, so a child started by node:child_process, which closes
 * nothing it was not asked to, does not get them), and an end given to a
 * call in any slot — stderr alone included — is the host's no longer, so
 * the consumer sees EOF when the producer ends.
 *
 * Seen red with the ends made without O_CLOEXEC (row create-pipe-cloexec)
 * and with the release stopping before stderr (row pipe-stderr-released).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readlinkSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createPipe, spawn, spawnSync } from "../../src/index.js";

/** What this process's fds name ("pipe:[123]"; the fallback's FIFO: its path). */
function heldFiles(): Set<string> {
  const held = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      held.add(target);
    } catch {
      // closed while listed (the listing's own fd)
    }
  }
  return held;
}

describe("createPipe()", () => {
  it("its ends do not reach a child the host starts otherwise (close-on-exec)", () => {
    const before = heldFiles();
    const pipe = createPipe();
    try {
      const ends = [...heldFiles()].filter((target) => !before.has(target));
      expect(ends).toHaveLength(1); // both ends name the one pipe (or FIFO)
      const childHolds = execFileSync(
        "/bin/sh",
        ["-c", 'for f in /proc/$$/fd/*; do readlink "$f"; done; true'],
        { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
      ).split("\n");
      expect(childHolds).not.toContain(ends[0]);
    } finally {
      pipe.close();
    }
  });

  it("an end given as stderr alone is released, and the consumer sees EOF (spawn)", async () => {
    const pipe = createPipe();
    const producer = spawn("/bin/sh", ["-c", "echo to-stderr >&2"], {
      stdio: ["ignore", "ignore", pipe],
    });
    expect(pipe.writeHeld).toBe(false);
    const consumer = spawn("/bin/cat", [], { stdio: [pipe, "pipe", "pipe"] });
    expect(pipe.readHeld).toBe(false);
    await producer;
    expect((await consumer).stdout).toBe("to-stderr\n");
  });

  it("an end given as stderr alone is released by spawnSync too", async () => {
    const pipe = createPipe();
    const consumer = spawn("/bin/cat", [], { stdio: [pipe, "pipe", "pipe"] });
    spawnSync("/bin/sh", ["-c", "echo sync-stderr >&2"], { stdio: ["ignore", "ignore", pipe] });
    expect(pipe.writeHeld).toBe(false);
    expect((await consumer).stdout).toBe("sync-stderr\n");
  });
});
