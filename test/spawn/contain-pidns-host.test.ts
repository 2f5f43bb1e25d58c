/**
 * Contained steps in a PID namespace and their host (docs/containment.md,
 * mechanism 2), each host a Node process of its own running the compiled
 * dist/:
 * - a root host with `mechanism: "pid-namespace"` forced, SIGKILLed
 *   mid-step (no `cleanup`, so no watchdog kills the step's group: only the
 *   init's parent-death signal ends the namespace);
 * - a host that may not create a cgroup (run as `nobody`): the default takes
 *   the PID namespace with a user namespace; the escapers die at the
 *   leader's exit, at a timeout, and when the host is SIGKILLed; they keep
 *   the host's uid as the system sees it; runtime.bash is contained too.
 * The escapers print their pids as the host sees them (/proc/self/stat read
 * by the shell: /proc is the host's).
 *
 * Seen red with the init's PR_SET_PDEATHSIG removed (scripts/mutants.mjs row
 * pidns-parent-death).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { nativeStatus, pidNamespaceSupport } from "../../src/index.js";
import {
  DIST_URL,
  type HostLibrary,
  privateLibrary,
  removeDir,
  runHost,
  scratchDir,
} from "../faults/host.js";
import {
  eventually,
  LeftBehind,
  type SeenProcess,
  seen,
  stillRunning,
} from "../fixtures/process-state.js";
import { stepInTerminatedWorker } from "./escapers.js";

const isRoot = process.getuid?.() === 0;
const setpriv = spawnSync("setpriv", ["--version"]).status === 0;
const canContain = nativeStatus().loaded && isRoot && pidNamespaceSupport().available;
const NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"];
const nobodyUid = Number(spawnSync("id", ["-u", "nobody"], { encoding: "utf8" }).stdout.trim());
const left = new LeftBehind();
let dir: string;
let library: HostLibrary;
beforeAll(() => {
  dir = scratchDir("exactspawn-contain-pidns-");
  library = privateLibrary(dir);
});
afterEach(() => left.killAll());
afterAll(() => removeDir(dir));

const PID = "read -r p _ </proc/self/stat; echo $p";
const ESCAPERS = `
setsid sh -c '${PID}; exec sleep 1000 >/dev/null' &
(sh -c '${PID}; exec sleep 1000 >/dev/null' &)
nohup sh -c '${PID}; exec sleep 1000 >/dev/null' 2>/dev/null &
`;
const STEP = `${ESCAPERS}exec sleep 1000`;

/** A host that starts STEP with `options` (JS source), reports the escapers' pids, then waits. */
function startHost(
  options: string,
  wrap: string[] = [],
): {
  child: ChildProcess;
  report: Promise<{ pid: number; pids: number[]; leader: number }>;
} {
  const source = `
    import { spawn } from ${JSON.stringify(wrap.length > 0 ? library.distUrl : DIST_URL)};
    const step = spawn("/bin/bash", ["-c", ${JSON.stringify(STEP)}], { env: { PATH: "/usr/bin:/bin" }, stdio: ["ignore", "pipe", "ignore"], ${options} });
    const pids = [];
    for await (const line of step.lines()) { pids.push(Number(line)); if (pids.length === 3) break; }
    console.log("REPORT " + JSON.stringify({ pid: process.pid, pids, leader: step.pid }));
    setInterval(() => {}, 1000);
  `;
  const [command, ...args] = [...wrap, process.execPath, "--input-type=module", "-e", source];
  const child = spawn(command!, args, { stdio: ["ignore", "pipe", "inherit"], cwd: dir });
  if (child.pid !== undefined) left.add(child.pid);
  let out = "";
  const report = new Promise<{ pid: number; pids: number[]; leader: number }>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((l) => l.startsWith("REPORT "));
      if (line !== undefined) resolve(JSON.parse(line.slice(7)));
    });
    child.once("exit", () => reject(new Error("host ended early")));
  });
  return { child, report };
}

async function killHostMidStep(options: string, wrap: string[] = []): Promise<SeenProcess[]> {
  const host = startHost(options, wrap);
  const report = await host.report;
  const escapers = report.pids.map(seen).filter((p): p is SeenProcess => p !== undefined);
  // The leader too: uncontained (the control) it outlives the host as well.
  left.add(...report.pids, report.leader);
  expect(escapers).toHaveLength(3);
  const exited = new Promise((r) => host.child.once("exit", r));
  host.child.kill("SIGKILL");
  await exited;
  return escapers;
}

describe.runIf(canContain)("a PID-namespace step and its host (root, mechanism forced)", () => {
  it("host SIGKILLed mid-step: the init's parent-death signal ends every escaper", async () => {
    const escapers = await killHostMidStep('contain: { mechanism: "pid-namespace" }');
    expect(await eventually(() => !escapers.some(stillRunning))).toBe(true);
  });

  it("a terminated worker's running step dies whole (the init's parent-death signal follows the worker's thread)", async () => {
    const run = runHost<{ pids: number[] }>(
      dir,
      `
      ${stepInTerminatedWorker(STEP, '{ mechanism: "pid-namespace" }')}
      report({ pids });
      `,
    );
    expect(run.stderr).toBe("");
    const pids = run.report!.pids;
    left.add(...pids);
    expect(pids).toHaveLength(3);
    expect(await eventually(() => !pids.some((pid) => stillRunning(seen(pid))))).toBe(true);
  });

  it("the control: uncontained, the escapers outlive a SIGKILLed host", async () => {
    const escapers = await killHostMidStep("setsid: true");
    expect(escapers.filter(stillRunning).length).toBeGreaterThan(0);
  });
});

describe.runIf(canContain && setpriv)("a host that may not create a cgroup (run as nobody)", () => {
  it("contains by default in a PID namespace with a user namespace: leader exit and timeout", () => {
    const run = runHost<{
      exit: { pids: number[]; alive: number[]; uids: number[]; contained: unknown; code: number };
      timeout: { pids: number[]; alive: number[]; failure: string };
      bash: unknown;
      view: { stdout: string; contained: unknown; view: boolean };
      cgroup: { code: string; missing: string[] };
    }>(
      dir,
      `
      import { createRuntime, spawn } from DIST;
      import { readFileSync } from "node:fs";
      process.chdir(${JSON.stringify(dir)}); // a directory nobody may use (the sandbox's writable one below)
      const alive = (pid) => { try { return readFileSync("/proc/" + pid + "/stat", "utf8").split(") ")[1][0] !== "Z"; } catch { return false; } };
      const uid = (pid) => Number(/^Uid:\\s+(\\d+)/m.exec(readFileSync("/proc/" + pid + "/status", "utf8"))[1]);
      const env = { PATH: "/usr/bin:/bin" };
      async function withEscapers(tail, options, end) {
        const step = spawn("/bin/bash", ["-c", ${JSON.stringify(ESCAPERS)} + tail], { env, stdio: ["pipe", "pipe", "ignore"], reject: false, contain: true, ...options });
        const pids = [];
        for await (const line of step.lines()) { pids.push(Number(line)); if (pids.length === 3) break; }
        const uids = pids.map(uid);
        end(step);
        const result = await step;
        return { pids, uids, result, alive: pids.filter(alive) };
      }
      const a = await withEscapers("read -r _; exit 4", {}, (s) => s.stdin.end("go\\n"));
      const t = await withEscapers("exec sleep 1000", { timeout: 3000, killGraceMs: 100 }, () => {});
      const runtime = createRuntime({ parentEnv: env });
      const bash = await runtime.bash("true");
      const cgroup = await spawn("/bin/true", [], { contain: { mechanism: "cgroup" } }).then(() => null, (e) => e);
      // With the sandbox's mount view (made in the step's own user namespace): /proc is the namespace's.
      const { sandboxSupport } = await import(DIST);
      const viewed = await spawn("/bin/bash", ["-c", "cat /proc/1/comm; echo $$; id -u"], { env, contain: true, sandbox: { writable: [process.cwd()] }, reject: false });
      report({
        exit: { pids: a.pids, alive: a.alive, uids: a.uids, contained: a.result.contained, code: a.result.exitCode },
        timeout: { pids: t.pids, alive: t.alive, failure: t.result.failure },
        bash: bash.contained,
        view: { stdout: viewed.stdout + viewed.stderr, contained: viewed.contained, view: sandboxSupport().readOnlyView },
        cgroup: { code: cgroup?.code, missing: cgroup?.missing },
      });
      `,
      // setpriv execs node itself: an `env` in between is refused a Node kept under /root (the matrix's).
      { wrap: [...NOBODY.slice(0, -1), `--inh-caps=-all`, "--"], library },
    );
    expect(run.stderr).toBe("");
    const r = run.report!;
    left.add(...r.exit.pids, ...r.timeout.pids);
    expect(r.exit.pids).toHaveLength(3);
    expect(r.exit.alive).toEqual([]);
    expect(r.exit.code).toBe(4);
    expect(r.exit.uids).toEqual([nobodyUid, nobodyUid, nobodyUid]);
    expect(r.exit.contained).toEqual({
      mechanism: "pid-namespace",
      userNamespace: true,
      limitEvents: null,
    });
    expect(r.timeout.pids).toHaveLength(3);
    expect(r.timeout.alive).toEqual([]);
    expect(r.timeout.failure).toBe("timeout");
    expect(r.bash).toEqual({ mechanism: "pid-namespace", userNamespace: true, limitEvents: null });
    if (r.view.view) expect(r.view.stdout).toBe(`exactspawn-help\n2\n${nobodyUid}\n`);
    expect(r.view.contained).toEqual({
      mechanism: "pid-namespace",
      userNamespace: true,
      limitEvents: null,
    });
    expect(r.cgroup.code).toBe("ERR_EXACTSPAWN_CONTAINMENT_UNAVAILABLE");
    expect(r.cgroup.missing).toEqual(["writable cgroup"]);
  });

  it("host SIGKILLed mid-step: every escaper dies with the namespace", async () => {
    const escapers = await killHostMidStep("contain: true", NOBODY);
    expect(await eventually(() => !escapers.some(stillRunning))).toBe(true);
  });
});
