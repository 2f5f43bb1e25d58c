/**
 * Contained steps in a PID namespace (docs/containment.md, mechanism 2), as
 * root with `mechanism: "pid-namespace"` forced: a bash step starts three
 * escapers — a `setsid` daemon, a double fork and a `nohup` job — each
 * printing its pid as the host sees it (the first field of /proc/self/stat,
 * read by the shell itself; /proc here is the host's), then the step ends by
 * leader exit, timeout or abort. Once it has settled none may be alive: the
 * step's PID 1 (the exec helper as init) kills what is left when the leader
 * ends, and the namespace dies with it. The leader's own exit code or signal
 * is what the step reports, not PID 1's.
 *
 * Seen red with PID 1's kill(-1) removed and with CLONE_NEWPID removed
 * (scripts/mutants.mjs rows pidns-init-kills-rest, pidns-new-namespace).
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  nativeStatus,
  pidNamespaceSupport,
  sandboxSupport,
  spawn,
  spawnSync,
} from "../../src/index.js";
import {
  LeftBehind,
  openFds,
  seen,
  stillRunning,
  zombieChildren,
} from "../fixtures/process-state.js";
import { runWithEscapers } from "./escapers.js";

const isRoot = process.getuid?.() === 0;
const canContain = nativeStatus().loaded && isRoot && pidNamespaceSupport().available;
const left = new LeftBehind();
afterEach(() => left.killAll());

const ENV = { PATH: process.env["PATH"] ?? "/usr/bin:/bin" };
const PID = "read -r p _ </proc/self/stat; echo $p";
/** Each escaper prints its host pid, then becomes a `sleep 1000` on /dev/null. */
const ESCAPERS = `
setsid sh -c '${PID}; exec sleep 1000 >/dev/null' &
(sh -c '${PID}; exec sleep 1000 >/dev/null' &)
nohup sh -c '${PID}; exec sleep 1000 >/dev/null' 2>/dev/null &
`;
const PIDNS = { mechanism: "pid-namespace" } as const;

describe.runIf(canContain)("contain: a PID namespace (as root, mechanism forced)", () => {
  it("pidNamespaceSupport() says it works here without a user namespace", () => {
    expect(pidNamespaceSupport()).toEqual({
      available: true,
      userNamespace: false,
      reason: null,
      missing: [],
    });
  });

  it("leader exit 0: the setsid daemon, the double fork and the nohup job are gone when it settles", async () => {
    const { escapers, result } = await runWithEscapers(
      left,
      ESCAPERS,
      "read -r _; exit 0",
      { contain: PIDNS },
      (child) => child.stdin!.end("go\n"),
    );
    expect(escapers).toHaveLength(3);
    expect(escapers.filter(stillRunning)).toEqual([]);
    expect(result).toMatchObject({
      exitCode: 0,
      signal: null,
      failure: null,
      contained: { mechanism: "pid-namespace", userNamespace: false, limitEvents: null },
    });
  });

  it("timeout: every escaper is gone; the leader's SIGTERM is reported", async () => {
    const { escapers, result } = await runWithEscapers(
      left,
      ESCAPERS,
      "exec sleep 1000",
      { contain: PIDNS, timeout: 5000, killGraceMs: 2000 },
      () => {},
    );
    expect(escapers).toHaveLength(3);
    expect(escapers.filter(stillRunning)).toEqual([]);
    expect(result).toMatchObject({ failure: "timeout", signal: "SIGTERM", exitCode: null });
  });

  it("abort: every escaper is gone when the aborted step settles", async () => {
    const abort = new AbortController();
    const { escapers, result } = await runWithEscapers(
      left,
      ESCAPERS,
      "exec sleep 1000",
      { contain: PIDNS, signal: abort.signal, killGraceMs: 2000 },
      () => abort.abort(),
    );
    expect(escapers).toHaveLength(3);
    expect(escapers.filter(stillRunning)).toEqual([]);
    expect(result).toMatchObject({ failure: "abort", signal: "SIGTERM" });
  });

  it("a leader that ignores SIGTERM: the escalation's SIGKILL ends the namespace", async () => {
    const { escapers, result } = await runWithEscapers(
      left,
      ESCAPERS,
      "trap '' TERM; while :; do sleep 1; done",
      { contain: PIDNS, timeout: 3000, killGraceMs: 100 },
      () => {},
    );
    expect(escapers.filter(stillRunning)).toEqual([]);
    expect(result).toMatchObject({ failure: "timeout", signal: "SIGKILL" });
  });

  it.each([
    ["exit 7", { exitCode: 7, signal: null }],
    ["exit 0", { exitCode: 0, signal: null }],
    ["kill -TERM $$", { exitCode: null, signal: "SIGTERM" }],
    ["kill -SEGV $$", { exitCode: null, signal: "SIGSEGV" }],
    ["kill -USR1 $$", { exitCode: null, signal: "SIGUSR1" }],
  ])("reports the leader's end exactly: %s", async (script, expected) => {
    const result = await spawn("/bin/bash", ["-c", script], {
      env: ENV,
      contain: PIDNS,
      reject: false,
    });
    expect(result).toMatchObject(expected);
    const sync = spawnSync("/bin/bash", ["-c", script], {
      env: ENV,
      contain: PIDNS,
      reject: false,
    });
    expect(sync).toMatchObject(expected);
  });

  it("the leader is pid 2 of its namespace, under the init as pid 1", async () => {
    const result = await spawn("/bin/bash", ["-c", "echo $$ $PPID"], { env: ENV, contain: PIDNS });
    expect(result.stdout.trim()).toBe("2 1");
  });

  it("a signal sent to the step reaches the leader once, through the init", async () => {
    const child = spawn(
      "/bin/bash",
      [
        "-c",
        "n=0; trap 'n=$((n+1))' USR1; echo ready; while [ $n -eq 0 ]; do sleep 0.05; done; sleep 0.3; exit $n",
      ],
      { env: ENV, contain: PIDNS, stdio: ["ignore", "pipe", "ignore"], reject: false },
    );
    for await (const line of child.lines()) if (line === "ready") break;
    child.kill("SIGUSR1");
    const result = await child;
    expect(result.exitCode).toBe(1);
  });

  it("spawnSync: the escapers are gone when it returns, its output ends with the tree", () => {
    const script = `exec 4>&1
{ ${ESCAPERS.replaceAll(">/dev/null", ">&4")} } | { read -r a; read -r b; read -r c; echo "$a $b $c" >&4; }
echo leader; exit 3`;
    const run = spawnSync("/bin/bash", ["-c", script], {
      env: ENV,
      contain: PIDNS,
      stdio: ["ignore", "pipe", "ignore"],
      reject: false,
    });
    const [pidLine, leader] = run.stdout.trim().split("\n");
    expect(leader).toBe("leader");
    expect(run.exitCode).toBe(3);
    const pids = pidLine!.split(" ").map(Number);
    expect(pids.filter((pid) => pid > 0)).toHaveLength(3);
    for (const pid of pids) expect(stillRunning(seen(pid))).toBe(false);
    expect(run.contained).toEqual({
      mechanism: "pid-namespace",
      userNamespace: false,
      limitEvents: null,
    });
  });

  it("spawnSync with a timeout: the escapers are gone, the leader's SIGTERM reported", () => {
    const script = `exec 4>&1
{ ${ESCAPERS.replaceAll(">/dev/null", ">&4")} } | { read -r a; read -r b; read -r c; echo "$a $b $c" >&4; }
exec sleep 1000`;
    const run = spawnSync("/bin/bash", ["-c", script], {
      env: ENV,
      contain: PIDNS,
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 2000,
      killGraceMs: 2000,
      reject: false,
    });
    const pids = run.stdout.trim().split(" ").map(Number);
    expect(pids.filter((pid) => pid > 0)).toHaveLength(3);
    for (const pid of pids) expect(stillRunning(seen(pid))).toBe(false);
    expect(run).toMatchObject({ failure: "timeout", signal: "SIGTERM" });
  });

  it("a leader that cannot be exec'ed fails the spawn with the exec's error, not an exit code", async () => {
    const error = await spawn("/bin/sh", [], {
      env: ENV,
      contain: PIDNS,
      cwd: "/nonexistent-dir",
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "ENOENT", syscall: "chdir" });
    expect(() =>
      spawnSync("/bin/sh", [], { env: ENV, contain: PIDNS, cwd: "/nonexistent-dir" }),
    ).toThrow(expect.objectContaining({ code: "ENOENT" }));
  });

  it("composes with uid: the leader runs as the uid, its escapers die with it", async () => {
    const { escapers, result } = await runWithEscapers(
      left,
      ESCAPERS,
      "id -u; read -r _; exit 0",
      { contain: PIDNS, uid: 65534, gid: 65534 },
      (child) => child.stdin!.end("go\n"),
    );
    expect(escapers.filter(stillRunning)).toEqual([]);
    expect(String(result.stdout).trim().split("\n")).toContain("65534");
    expect(result).toMatchObject({ exitCode: 0, contained: { mechanism: "pid-namespace" } });
  });

  it("resourceUsage covers the tree: a setsid grandchild's CPU counts (the init reaps it)", async () => {
    const burn = `${process.execPath} -e 'const t = process.cpuUsage(); while (process.cpuUsage(t).user < 400000);'`;
    const script = `x=$( (setsid sh -c "${burn}; echo done" &) ); echo "$x"`;
    const run = await spawn("/bin/bash", ["-c", script], { env: ENV, contain: PIDNS });
    expect(run.stdout.trim()).toBe("done");
    const tree = run.resourceUsage!;
    expect(tree.userCpuMicros + tree.systemCpuMicros).toBeGreaterThanOrEqual(400_000);
  });
});

describe.runIf(canContain)("contain: many PID-namespace steps at once (as root)", () => {
  it("300 concurrent steps leave no process, fd, thread or zombie behind", async () => {
    const threads = () =>
      Number(/^Threads:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"))![1]);
    await spawn("/bin/true", [], { contain: PIDNS });
    const fdsBefore = openFds().length;
    const threadsBefore = threads();
    const script =
      "x=$( (read -r p _ </proc/self/stat; echo $p; exec sleep 1000 >/dev/null) & ); echo $x";
    const runs = await Promise.all(
      Array.from({ length: 300 }, () =>
        spawn("/bin/bash", ["-c", script], { env: ENV, contain: PIDNS }),
      ),
    );
    const sleepers = runs.map((r) => Number(r.stdout.trim()));
    left.add(...sleepers);
    expect(new Set(sleepers).size).toBe(300);
    expect(sleepers.filter((pid) => stillRunning(seen(pid)))).toEqual([]);
    expect(openFds().length).toBe(fdsBefore);
    expect(threads()).toBe(threadsBefore);
    expect(zombieChildren()).toEqual([]);
  });
});

describe.runIf(canContain && sandboxSupport().readOnlyView)(
  "contain: a PID namespace with the sandbox's mount view (as root)",
  () => {
    it("/proc shows the namespace: the init as pid 1, the leader, nothing of the host", async () => {
      const scratch = mkdtempSync(join(tmpdir(), "exactspawn-pidns-view-"));
      try {
        const result = await spawn(
          "/bin/bash",
          [
            "-c",
            "cat /proc/1/comm; echo $$; ls /proc | grep -c '^[0-9]'; grep -c . /proc/self/mounts >/dev/null; touch /proc/x 2>/dev/null || echo ro",
          ],
          { env: ENV, contain: PIDNS, sandbox: { writable: [scratch] } },
        );
        const [comm, self, count, ro] = result.stdout.trim().split("\n");
        expect(comm).toBe("exactspawn-help");
        expect(self).toBe("2");
        // The init, bash, and ls and grep of the pipeline at most.
        expect(Number(count)).toBeLessThanOrEqual(4);
        expect(ro).toBe("ro");
        expect(result.contained).toEqual({
          mechanism: "pid-namespace",
          userNamespace: false,
          limitEvents: null,
        });
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    });
  },
);
