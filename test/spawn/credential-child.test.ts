/**
 * A child that changes its credentials (uid, gid or groups) changes them in
 * the exec helper (its own memory, after the vfork child's exec of it): it
 * never shares the host's memory, so the target uid can never reach the host
 * through it (issue 21, finding 1), and the host's dumpable flag is never
 * touched. The host never forks (issue 27, finding 2).
 *
 * The oracles are the kernel's: the exec-hold fixture holds the child inside
 * execve (a write lease on its program: an event, no sleep) and asks
 * kcmp(KCMP_VM) whether it still shares the host's mm; /proc/<host> is owned
 * by root while the host is not dumpable (/proc/<host>/status: its owner is
 * re-read at each lookup); strace shows the clone flags and which program
 * each child exec'ed before its uid changed.
 * Seen red on the CLONE_VM | CLONE_VFORK child path without the helper: "held
 * … shared", the capable non-root host non-dumpable while its child was held,
 * and setresuid in a child that had not exec'ed.
 *
 * The spawning thread never waits for such a child's exec (finding 2: the
 * target user could stop the child and with it the host's event loop): its
 * start is read when the child is reaped. Seen red with the spawning thread
 * waiting on the start-status pipe: the loop stood still until the kernel
 * broke the lease (lease-break-time), and the child had exec'ed by then.
 *
 * It also joins a new session keyring (finding 6): seen red without the
 * join, the uid child found and read the host's session key.
 */
import { type ChildProcess, spawn as spawnChild, spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  nativeStatus,
  sandboxSupport,
  spawn,
  spawnSync as spawnSyncExact,
} from "../../src/index.js";
import { fixtureBinary } from "../fixtures/build.js";
import { eventually, openFds, zombieChildren } from "../fixtures/process-state.js";

const root = resolve(import.meta.dirname, "../..");
const dist = pathToFileURL(join(root, "dist/index.js")).href;
const NOBODY = 65_534;
const OTHER = 4242;
const isRoot = process.getuid?.() === 0;
const hasSetpriv = spawnSync("setpriv", ["--version"]).status === 0;
const hasStrace = spawnSync("strace", ["-V"]).status === 0;

/** The first stdout line of `child` that matches `pattern`. */
function lineOf(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolveLine, reject) => {
    let seen = "";
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const line = seen.split("\n").find((l) => pattern.test(l));
      if (line !== undefined) {
        child.stdout!.off("data", onData);
        resolveLine(line);
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`exited (${code}) before printing ${pattern}`)));
  });
}

describe.runIf(nativeStatus().loaded && isRoot)(
  "a credential-changing child (native engine)",
  () => {
    let dir: string;
    let program: string;
    const started: ChildProcess[] = [];
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "exactspawn-cred-"));
      chmodSync(dir, 0o755);
      program = join(dir, "true");
      copyFileSync("/bin/true", program);
      chmodSync(program, 0o755);
      writeFileSync(
        join(dir, "host.mjs"),
        `import { statSync } from "node:fs";
      import { spawn } from ${JSON.stringify(dist)};
      const [program, uid] = [process.argv[2], Number(process.argv[3])];
      process.stdin.once("data", async () => {
        const result = await spawn(program, [], { uid, gid: uid, reject: false });
        const dumpable = statSync("/proc/" + process.pid + "/status").uid === process.getuid();
        console.log(JSON.stringify({ exitCode: result.exitCode, dumpable }));
        process.stdin.destroy();
      });
      console.log("listening");`,
      );
    });
    afterEach(() => {
      for (const child of started.splice(0)) child.kill("SIGKILL");
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    function start(command: string, args: string[]): ChildProcess {
      const child = spawnChild(command, args, { stdio: ["pipe", "pipe", "inherit"] });
      started.push(child);
      return child;
    }

    /**
     * Starts a host (`launcher` + node host.mjs), lets it spawn `program` as
     * `uid`, holds that child inside execve and reports what the fixture saw,
     * who owned /proc/<host> meanwhile, and the host's own report afterwards.
     */
    async function holdOneSpawn(launcher: string[], uid: number) {
      const [command, ...args] = [...launcher, process.execPath, join(dir, "host.mjs")];
      const host = start(command!, [...args, program, String(uid)]);
      await lineOf(host, /^listening$/);
      const hold = start(fixtureBinary("exec-hold"), [program, String(host.pid), String(uid)]);
      await lineOf(hold, /^ready$/);
      const report = lineOf(host, /^\{/);
      host.stdin!.write("go\n");
      const held = await lineOf(hold, /^held /);
      const ownerWhileHeld = statSync(`/proc/${host.pid}/status`).uid;
      hold.stdin!.end("release\n");
      const after = JSON.parse(await report) as { exitCode: number; dumpable: boolean };
      return { held, ownerWhileHeld, after };
    }

    it("never shares the host's memory while it sits in execve as the new uid (root host)", async () => {
      const { held, after } = await holdOneSpawn([], NOBODY);
      expect(held).toMatch(/ private$/);
      expect(after.exitCode).toBe(0);
    }, 90_000);

    it.runIf(hasSetpriv)(
      "leaves a non-root host holding CAP_SETUID dumpable, during the child's start and after",
      async () => {
        const launcher = [
          "setpriv",
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          "--clear-groups",
          "--inh-caps=+setuid,+setgid",
          "--ambient-caps=+setuid,+setgid",
          "--",
        ];
        const { held, ownerWhileHeld, after } = await holdOneSpawn(launcher, OTHER);
        expect(held).toMatch(/ private$/);
        // /proc/<pid>/status belongs to root while the process is not dumpable (the
        // directory's own inode keeps the owner of its first lookup).
        expect(ownerWhileHeld).toBe(NOBODY);
        expect(after).toEqual({ exitCode: 0, dumpable: true });
      },
      90_000,
    );

    it("keeps the host's event loop turning while a uid child is held before its exec", async () => {
      const hold = start(fixtureBinary("exec-hold"), [
        program,
        String(process.pid),
        String(NOBODY),
      ]);
      await lineOf(hold, /^ready$/);
      let ticks = 0;
      let turning = true;
      const turn = () => {
        ticks++;
        if (turning) setImmediate(turn);
      };
      setImmediate(turn);
      const run = spawn(program, [], { uid: NOBODY, reject: false });
      // The fixture's line is itself an event this loop had to deliver.
      const held = Number((await lineOf(hold, /^held /)).split(" ")[1]);
      const stillHeld = () => {
        try {
          return readlinkSync(`/proc/${held}/exe`) !== program;
        } catch {
          return false; // exec'ed and gone
        }
      };
      expect(stillHeld()).toBe(true);
      const ticksWhenHeld = ticks;
      await new Promise((next) => setImmediate(next));
      await new Promise((next) => setImmediate(next));
      expect(ticks).toBeGreaterThan(ticksWhenHeld);
      expect(stillHeld()).toBe(true);
      hold.stdin!.end("release\n");
      turning = false;
      expect((await run).exitCode).toBe(0);
    }, 90_000);

    it("reports a failed start of a uid child alike from spawn and spawnSync", async () => {
      const missing = join(dir, "missing");
      const locked = join(dir, "root-only");
      mkdirSync(locked, { recursive: true, mode: 0o700 });
      const fdsBefore = openFds();
      const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
        [missing, {}, { code: "ENOENT", syscall: "execve", path: missing }],
        [program, { cwd: locked }, { code: "EACCES", syscall: "chdir", path: locked }],
      ];
      for (const [file, options, expected] of cases) {
        const asyncError = await spawn(file, [], { uid: NOBODY, ...options }).then(
          () => new Error("expected a failure"),
          (error: unknown) => error,
        );
        let syncError: unknown = new Error("expected a failure");
        try {
          spawnSyncExact(file, [], { uid: NOBODY, ...options });
        } catch (error) {
          syncError = error;
        }
        expect(asyncError).toMatchObject(expected);
        expect(syncError).toMatchObject(expected);
        const { message, errno } = asyncError as NodeJS.ErrnoException;
        expect({ message, errno }).toEqual({
          message: (syncError as Error).message,
          errno: (syncError as NodeJS.ErrnoException).errno,
        });
      }
      expect(await eventually(() => openFds().every((fd) => fdsBefore.includes(fd)))).toBe(true);
      expect(await eventually(() => zombieChildren().length === 0)).toBe(true);
    });

    it("starts a uid child in a new session keyring: the host's keys are out of its reach", () => {
      // The host runs in a session keyring of its own holding one key (the
      // keyring fixture), so the machine's keyrings are never touched.
      const host = join(dir, "keys.mjs");
      writeFileSync(
        host,
        `import { spawn } from ${JSON.stringify(dist)};
      const [probe, id] = [process.argv[2], process.env.EXACTSPAWN_KEY_ID];
      const read = async (options) => (await spawn(probe, ["read", id], options)).stdout.trim().split("\\n");
      console.log(JSON.stringify({ same: await read({}), other: await read({ uid: ${NOBODY}, gid: ${NOBODY} }) }));`,
      );
      const probe = fixtureBinary("keyring");
      const result = spawnSync(probe, ["host", process.execPath, host, probe], {
        encoding: "utf8",
      });
      expect(result.stderr).toBe("");
      expect(JSON.parse(result.stdout)).toEqual({
        // The contrast: a child that keeps the host's credentials keeps its keyring.
        same: ["session:exactspawn-key-payload", "id:exactspawn-key-payload"],
        other: ["session:ENOKEY", "id:EACCES"],
      });
    });

    it.runIf(sandboxSupport().missing.length === 0)(
      "confines a sandboxed uid child in the helper as on the shared path",
      async () => {
        const open = join(dir, "open-to-all");
        mkdirSync(open, { recursive: true });
        chmodSync(open, 0o777);
        const script = `id -u; touch "$1/by-$2" && echo wrote`;
        const run = (tag: string, options: object) =>
          spawn("/bin/sh", ["-c", script, "sh", open, tag], {
            uid: NOBODY,
            gid: NOBODY,
            reject: false,
            ...options,
          });
        // The contrast: as nobody, unconfined, the directory is writable.
        expect((await run("free", {})).stdout).toBe(`${NOBODY}\nwrote\n`);
        const boxed = await run("boxed", { sandbox: { writable: [] } });
        expect(boxed.stdout).toBe(`${NOBODY}\n`);
        expect(boxed.exitCode).not.toBe(0);
      },
    );

    it.runIf(hasStrace)(
      "starts uid children from three threads at once, each changing its uid only in the helper (strace)",
      () => {
        const host = join(dir, "threads.mjs");
        writeFileSync(
          host,
          `import { Worker } from "node:worker_threads";
        const lane = \`const { parentPort } = require("node:worker_threads");
          (async () => {
            const { spawn } = await import(${JSON.stringify(dist)});
            for (let i = 0; i < 5; i++) await spawn("/bin/true", [], { uid: ${NOBODY} });
            parentPort.postMessage("done");
          })();\`;
        await Promise.all([0, 1, 2].map(() => new Promise((done, fail) => {
          const worker = new Worker(lane, { eval: true });
          worker.once("message", done);
          worker.once("error", fail);
        })));
        console.log("ok");`,
        );
        const log = join(dir, "clone.log");
        const result = spawnSync(
          "strace",
          [
            "-f",
            "-qq",
            "-e",
            "trace=clone,clone3,vfork,fork,execve,execveat,setresuid",
            "-o",
            log,
            process.execPath,
            host,
          ],
          { encoding: "utf8" },
        );
        expect(result.stdout).toBe("ok\n");
        const lines = readFileSync(log, "utf8").split("\n");
        // Threads are clones with CLONE_THREAD; every other clone made a process.
        const processes = lines.filter(
          (line) => /(clone3?|fork)\(/.test(line) && !line.includes("CLONE_THREAD"),
        );
        expect(processes).toHaveLength(15);
        // No copy of the host: every child shares its memory only until it execs.
        expect(processes.filter((line) => !line.includes("CLONE_VFORK"))).toEqual([]);
        // Each child: the helper's exec, then the uid change, then the target's exec.
        const byPid = new Map<string, string[]>();
        for (const line of lines) {
          const [, pid, call] = /^(\d+)\s+(execveat|execve|setresuid)\(/.exec(line) ?? [];
          if (pid === undefined || call === undefined || line.includes("= -1")) continue;
          if (call === "execve" && line.includes(process.execPath)) continue;
          byPid.set(pid, [...(byPid.get(pid) ?? []), call]);
        }
        const steps = [...byPid.values()].filter((calls) => calls.includes("setresuid"));
        expect(steps).toHaveLength(15);
        for (const calls of steps) expect(calls).toEqual(["execveat", "setresuid", "execve"]);
      },
      90_000,
    );
  },
);
