/**
 * A PID-namespace step whose processes tamper with its init (the exec helper
 * as PID 1). A root step holds CAP_SYS_PTRACE: its tracer PTRACE_ATTACHes
 * PID 1 and keeps it stopped, then the leader exits. The init can neither
 * reap the leader nor end the namespace, so a host that learns of the end
 * only through the init never settles the step. The host watches the leader
 * itself (its pidfd, sent by the leader through the status socket): when it
 * has ended, the host takes its status and SIGKILLs the init, which ends the
 * namespace, the tracer included.
 *
 * A step of a host without privileges cannot attach to its init at all: it
 * holds no capability in its namespace while the init holds CAP_SYS_ADMIN
 * there (the kernel's permitted-subset rule), and the init is not dumpable
 * besides (defence in depth: this case stays green without it).
 *
 * The root case was seen red before the fix (the step never settled: the
 * test's 60 s bound) and with the leader watch's kill removed
 * (test/mutants/table.mjs rows pidns-leader-watched, pidns-leader-watched-sync;
 * spawnSync's case ends by its 30 s timeout there instead of the leader's exit).
 */
import { spawnSync } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  nativeStatus,
  pidNamespaceSupport,
  spawn,
  spawnSync as spawnSyncStep,
} from "../../src/index.js";
import { privateLibrary, removeDir, runHost, scratchDir } from "../faults/host.js";
import { eventually, LeftBehind, seen, stillRunning } from "../fixtures/process-state.js";

const isRoot = process.getuid?.() === 0;
const python = spawnSync("python3", ["--version"]).status === 0;
const setpriv = spawnSync("setpriv", ["--version"]).status === 0;
const canContain = nativeStatus().loaded && isRoot && python && pidNamespaceSupport().available;
const left = new LeftBehind();
afterEach(() => left.killAll());

const ENV = { PATH: process.env["PATH"] ?? "/usr/bin:/bin" };

// Attaches to PID 1 and waits for its stop, prints "stopped <own host pid>"
// (/proc is the host's here) and keeps it stopped; with "probe", prints the
// attach's errno and lets go at once.
const TRACER = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
me = open("/proc/self/stat").read().split()[0]
if libc.ptrace(16, 1, 0, 0) != 0:
    print("refused", ctypes.get_errno(), flush=True); sys.exit(0)
os.waitpid(1, 0x40000000)
if len(sys.argv) > 1:
    libc.ptrace(17, 1, 0, 0); print("attached", flush=True); sys.exit(0)
print("stopped", me, flush=True)
time.sleep(1000)
`;

describe.runIf(canContain)("a root step that ptraces its init", () => {
  it("settles with its leader's status once the leader exits, the tracer killed", async () => {
    const step = spawn(
      "/bin/bash",
      ["-c", 'exec 3< <(python3 -c "$1"); read -r line <&3; echo "$line"; exit 7', "step", TRACER],
      {
        env: ENV,
        stdio: ["ignore", "pipe", "ignore"],
        reject: false,
        contain: { mechanism: "pid-namespace" },
      },
    );
    const result = await step;
    const [word, pid] = result.stdout.trim().split(" ");
    expect(word).toBe("stopped");
    left.add(Number(pid));
    expect(result.exitCode).toBe(7);
    expect(result.contained).toEqual({
      mechanism: "pid-namespace",
      userNamespace: false,
      limitEvents: null,
    });
    expect(await eventually(() => !stillRunning(seen(Number(pid))))).toBe(true);
  }, 60_000);

  it("spawnSync too", () => {
    const result = spawnSyncStep(
      "/bin/bash",
      ["-c", 'exec 3< <(python3 -c "$1"); read -r line <&3; echo "$line"; exit 7', "step", TRACER],
      {
        env: ENV,
        stdio: ["ignore", "pipe", "ignore"],
        reject: false,
        timeout: 30_000,
        contain: { mechanism: "pid-namespace" },
      },
    );
    const [word, pid] = String(result.stdout).trim().split(" ");
    expect(word).toBe("stopped");
    left.add(Number(pid));
    expect(result.exitCode).toBe(7);
    expect(result.failure).toBe("exit");
    expect(stillRunning(seen(Number(pid)))).toBe(false);
  });
});

let dir = "";
describe.runIf(canContain && setpriv)("a step of a host without privileges", () => {
  beforeAll(() => {
    dir = scratchDir("exactspawn-pidns-tamper-");
  });
  afterAll(() => removeDir(dir));

  it("cannot attach to its init", () => {
    const run = runHost<{ stdout: string; contained: unknown; code: number }>(
      dir,
      `
      import { spawn } from DIST;
      const r = await spawn("/usr/bin/python3", ["-c", ${JSON.stringify(TRACER)}, "probe"], { env: { PATH: "/usr/bin:/bin" }, reject: false, contain: true });
      report({ stdout: r.stdout, contained: r.contained, code: r.exitCode });
      `,
      {
        wrap: [
          "setpriv",
          "--reuid=nobody",
          "--regid=nogroup",
          "--clear-groups",
          "--inh-caps=-all",
          "--",
        ],
        library: privateLibrary(dir),
      },
    );
    expect(run.stderr).toBe("");
    expect(run.report).toEqual({
      stdout: "refused 1\n",
      contained: { mechanism: "pid-namespace", userNamespace: true, limitEvents: null },
      code: 0,
    });
  });
});
