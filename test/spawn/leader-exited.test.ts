/**
 * exitedUnreaped (src/spawn/leader-exited.ts) reads the state after the
 * command name's *last* `)` of /proc/<pid>/stat: a command may name itself
 * anything, `) Z` and `) R` included (its name is its file's name). A leader
 * whose name reads as a zombie would have its timeout not counted; a zombie
 * whose name reads as running would be reported as timed out after it had
 * exited in time.
 *
 * The processes: a program started under such a name through a symlink, run
 * by a shell that forks it and then execs `sleep` (which never reaps, so it
 * stays a zombie once the test lets it exit). Seen red with `indexOf(")")` for `lastIndexOf`
 * (row zombie-check-last-paren).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { exitedUnreaped } from "../../src/spawn/leader-exited.js";

const dir = mkdtempSync(join(tmpdir(), "exactspawn-leader-exited-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const holders: ChildProcess[] = [];
afterEach(() => {
  for (const holder of holders.splice(0)) holder.kill("SIGKILL");
});

/**
 * Starts `target` under the file name `name` as the child of a holder that
 * then becomes `sleep` (its stdin is the child's fd 3); resolves its pid.
 */
async function started(
  name: string,
  target: string,
  args: string,
): Promise<{ pid: number; holder: ChildProcess }> {
  const link = join(dir, name);
  symlinkSync(target, link);
  const holder = spawn(
    "/bin/sh",
    ["-c", `exec 3<&0; "$0" ${args} & echo $!; exec sleep 1000 3<&-`, link],
    {
      stdio: ["pipe", "pipe", "ignore"],
    },
  );
  holders.push(holder);
  const line = await new Promise<string>((resolve) => {
    holder.stdout!.once("data", (chunk: Buffer) => resolve(chunk.toString()));
  });
  return { pid: Number(line.trim()), holder };
}

/** The state field by the rule the kernel documents (after the last ")"). */
function state(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat[stat.lastIndexOf(")") + 2]!;
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe("exitedUnreaped", () => {
  it("a zombie named `x) R (y` is a zombie", async () => {
    const { pid, holder } = await started("x) R (y", "/bin/sh", "-c 'read _ <&3'");
    await until(() => readFileSync(`/proc/${pid}/comm`, "latin1") === "x) R (y\n");
    holder.stdin!.end("go\n"); // it exits now, after the holder became sleep
    await until(() => state(pid) === "Z");
    expect(readFileSync(`/proc/${pid}/stat`, "latin1")).toContain("(x) R (y) Z");
    expect(exitedUnreaped(pid)).toBe(true);
  });

  it("a running process named `x) Z (y` is not", async () => {
    const { pid } = await started("x) Z (y", "/bin/sleep", "1000");
    await until(() => readFileSync(`/proc/${pid}/comm`, "latin1") === "x) Z (y\n");
    expect(state(pid)).not.toBe("Z");
    expect(exitedUnreaped(pid)).toBe(false);
  });

  it("no pid, or one that is gone, is not", () => {
    expect(exitedUnreaped(undefined)).toBe(false);
    expect(exitedUnreaped(0x3fffffff)).toBe(false);
  });
});
