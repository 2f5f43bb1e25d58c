/**
 * The spill played by an attacker: another local user racing renames in a
 * world-writable TMPDIR without the sticky bit, and a host SIGKILLed in the
 * middle of a step. Runs in both projects: the native engine spills through
 * a memfd, the fallback through an O_TMPFILE file; the last-resort named
 * file is refused in such a TMPDIR. The two-user test needs root (useradd,
 * setpriv) and is skipped otherwise.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime } from "../../src/runtime.js";
import { writeSpillValues } from "../../src/step/spill-files.js";
import { seen, signalSeen } from "../fixtures/process-state.js";
import { errorText, makeRootFactory, sha256 } from "../helpers/steps.js";

const { root, removeRoots } = makeRootFactory();
afterAll(removeRoots);

const KIB = 1024;
const SENTINEL = "SENTINEL-sw4p";
const isRoot = process.getuid?.() === 0;

describe.runIf(isRoot)("a second local user racing renames in a world-writable TMPDIR", () => {
  const user = `es_spillfd_${process.pid}`;
  let uid = 0;
  let dir = "";
  let attacker: ChildProcess | undefined;
  let found = "";

  beforeAll(() => {
    execFileSync("useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", user]);
    uid = Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
    dir = mkdtempSync(join(tmpdir(), "exactspawn-swap-"));
    chmodSync(dir, 0o777); // world-writable, no sticky bit
    // The attacker: every entry someone else creates is renamed away and
    // replaced by its own file (a script printing "evil"); what it found is printed.
    const loop = `while :; do for f in "$D"/* "$D"/.[!.]*; do
      case "$f" in *'*'|*'[!.]*'|*.moved) continue;; esac
      [ -e "$f" ] || [ -L "$f" ] || continue
      [ -O "$f" ] && continue
      mv -f "$f" "$f.moved" 2>/dev/null && { echo "$f"; printf 'echo evil\\n' > "$f"; }
    done; done`;
    attacker = spawn(
      "setpriv",
      [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "/bin/bash", "-c", loop],
      {
        env: { D: dir, PATH: "/usr/bin:/bin" },
        stdio: ["ignore", "pipe", "ignore"],
        detached: true,
      },
    );
    attacker.stdout?.on("data", (chunk: Buffer) => {
      found += chunk.toString();
    });
  });

  afterAll(async () => {
    if (attacker?.pid !== undefined && attacker.exitCode === null && attacker.signalCode === null) {
      const gone = new Promise((resolve) => attacker?.once("exit", resolve));
      process.kill(-attacker.pid, "SIGKILL"); // pid pinned: our child, its leader not yet reaped
      await gone;
    }
    try {
      if (dir !== "") rmSync(dir, { recursive: true, force: true });
    } finally {
      try {
        execFileSync("userdel", [user]);
      } catch {
        // never created
      }
    }
  });

  it("the attacker loop really works: a file created there by name is swapped", async () => {
    // Shows the race the descriptors avoid (and that the test would see it).
    execFileSync("sh", ["-c", `printf mine > "${dir}/probe"`]);
    // The loop renames, then writes: between the two the name is missing
    // or the new file is still empty, so a miss is simply "not yet".
    const swapped = () => {
      try {
        return readFileSync(join(dir, "probe"), "utf8") === "echo evil\n";
      } catch {
        return false;
      }
    };
    try {
      for (let i = 0; i < 3000 && !(swapped() && found.includes("/probe")); i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(found).toContain(`${dir}/probe`);
      expect(swapped()).toBe(true);
    } finally {
      found = "";
      rmSync(join(dir, "probe"), { force: true });
      rmSync(join(dir, "probe.moved"), { force: true });
    }
  });

  // Breaking the control: with every step forced to the named kind and the
  // TMPDIR check removed, the attacker swapped files and steps failed or
  // read its content (seen red, restored).
  it("60 steps with big spilled values and a >64 KiB script each get exactly their own value and script; the attacker finds nothing", async () => {
    const runtime = createRuntime();
    const padding = `: '${"p".repeat(70 * KIB)}'`;
    const steps = Array.from({ length: 60 }, (_, i) => i);
    const outputs: string[] = [];
    for (let batch = 0; batch < steps.length; batch += 4) {
      const results = await Promise.all(
        steps
          .slice(batch, batch + 4)
          .map((i) =>
            runtime.bash(
              `${padding}\necho "mine-${i}"\nprintf %s "$RECIPE_VAR_big" | sha256sum | cut -c1-64`,
              { values: { big: `${SENTINEL}${i}:${"b".repeat(200 * KIB)}` }, tmpdir: dir },
            ),
          ),
      );
      for (const result of results) {
        expect(result.scriptMode).toBe("file");
        outputs.push(result.output);
      }
    }
    outputs.forEach((output, i) => {
      expect(output).toBe(`mine-${i}\n${sha256(`${SENTINEL}${i}:${"b".repeat(200 * KIB)}`)}`);
    });
    expect(found).toBe("");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("the last-resort named file is refused there with the named error (path, no value)", () => {
    let error: unknown;
    try {
      writeSpillValues(
        { spilled: [{ name: "RECIPE_VAR_big" }] },
        new Map([["RECIPE_VAR_big", `${SENTINEL}-value`]]),
        { kinds: ["unlinked"], tmpdir: dir },
      );
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ name: "SpillError", ioCode: "ERR_EXACTSPAWN_UNSAFE_TMPDIR" });
    expect((error as Error).cause).toMatchObject({
      code: "ERR_EXACTSPAWN_UNSAFE_TMPDIR",
      path: dir,
    });
    expect(errorText(error)).not.toContain(SENTINEL);
    expect(found).toBe("");
  });
});

describe("a host SIGKILLed in the middle of a step", () => {
  // Against the previous design (spill and script files in mkdtemp
  // directories, removed by the host) the same fixture left
  // exactspawn-spill-* and exactspawn-script-* behind (seen red).
  it("leaves nothing in TMPDIR", async () => {
    const tmp = root();
    const marks = root();
    // A FIFO: reading it completes when the step has written its pid, so the
    // test waits for that event, never for a polling deadline.
    const pidFile = join(marks, "pid");
    execFileSync("mkfifo", [pidFile]);
    const fixture = fileURLToPath(new URL("../fixtures/spill-host.mjs", import.meta.url));
    const host = spawn(process.execPath, [fixture, tmp, pidFile], {
      env: process.env,
      stdio: "ignore",
    });
    const exited = new Promise((resolve) => host.once("exit", resolve));
    const pidText = await Promise.race([
      readFile(pidFile, "utf8"),
      exited.then(() => {
        closeSync(openSync(pidFile, constants.O_WRONLY | constants.O_NONBLOCK)); // frees the reader
        throw new Error("the host exited before its step started");
      }),
    ]);
    const step = seen(Number(pidText.trim())); // seen while its host still runs
    host.kill("SIGKILL");
    await exited;
    try {
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      signalSeen(step, "SIGKILL", { group: true }); // the step normally died with its host
    }
  });
});
