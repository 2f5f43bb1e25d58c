/**
 * Contained bash steps and their host (docs/containment.md), in separate
 * Node processes running the compiled dist/:
 * - runtime.bash contains by default where the host can: a step's `setsid`
 *   daemon, double fork and `nohup` job die with the step;
 * - the host is SIGKILLed mid-step: the watchdog kills the host's cgroup
 *   sub-tree and removes it;
 * - a host that may not create a cgroup (run as `nobody`): the cgroup
 *   mechanism asked by name is refused with a ContainmentError naming what
 *   is missing; `contain: true` and bash steps fall back to a PID namespace
 *   (contain-pidns-host.test.ts has its escapers).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cgroupSupport, nativeStatus } from "../../src/index.js";
import { DIST_URL, privateLibrary, removeDir, runHost, scratchDir } from "../faults/host.js";
import { hostSubtree } from "../fixtures/cgroup-subtree.js";
import {
  eventually,
  LeftBehind,
  type SeenProcess,
  seen,
  stillRunning,
} from "../fixtures/process-state.js";
import { stepInTerminatedWorker } from "./escapers.js";

const support = cgroupSupport();
const isRoot = process.getuid?.() === 0;
const canContain = nativeStatus().loaded && support.available && isRoot;
const setpriv = spawnSync("setpriv", ["--version"]).status === 0;
const left = new LeftBehind();
let dir: string;
beforeAll(() => {
  dir = scratchDir("exactspawn-contain-host-");
});
afterEach(() => left.killAll());
afterAll(() => removeDir(dir));

/** Starts the three escapers; each prints its pid. */
const ESCAPERS = `
setsid sh -c 'echo $$; exec sleep 1000 >/dev/null' &
(sh -c 'echo $$; exec sleep 1000 >/dev/null' &)
nohup sh -c 'echo $$; exec sleep 1000 >/dev/null' 2>/dev/null &
`;
/** A step that starts them, then waits. */
const STEP = `${ESCAPERS}exec sleep 1000`;

describe.runIf(canContain)("contained bash steps and their host (as root)", () => {
  it("runtime.bash contains by default: the escapers die when the leader exits", () => {
    const run = runHost<{ pids: number[]; contained: unknown; alive: number[] }>(
      dir,
      `
      import { createRuntime } from DIST;
      import { readFileSync } from "node:fs";
      const alive = (pid) => { try { return readFileSync("/proc/" + pid + "/stat", "utf8").split(") ")[1][0] !== "Z"; } catch { return false; } };
      const runtime = createRuntime({ parentEnv: { PATH: process.env.PATH } });
      const step = ${JSON.stringify(ESCAPERS)};
      // The leader waits until all three printed (they report on a pipe it reads).
      const result = await runtime.bash("exec 4>&1; { " + step + " } | { read -r a; read -r b; read -r c; echo $a $b $c >&4; }");
      const pids = result.stdout.trim().split(" ").map(Number);
      report({ pids, contained: result.contained, alive: pids.filter(alive) });
      `,
    );
    expect(run.stderr).toBe("");
    const r = run.report!;
    expect(r.pids).toHaveLength(3);
    expect(r.alive).toEqual([]);
    expect(r.contained).toMatchObject({ mechanism: "cgroup" });
  });

  it("host SIGKILLed mid-step: the watchdog kills every escaper and removes the host's cgroups", async () => {
    const host = startHost(`
      import { createRuntime } from DIST;
      const runtime = createRuntime({ parentEnv: { PATH: process.env.PATH } });
      const step = runtime.bash(${JSON.stringify(STEP)}, { stdio: ["ignore", "pipe", "ignore"] });
      const pids = [];
      for await (const line of step.lines()) { pids.push(Number(line)); if (pids.length === 3) break; }
      console.log("REPORT " + JSON.stringify({ pid: process.pid, pids }));
      setInterval(() => {}, 1000);
    `);
    const report = await host.report;
    const escapers = report.pids.map(seen).filter((p): p is SeenProcess => p !== undefined);
    left.add(...report.pids);
    expect(escapers).toHaveLength(3);
    const subtree = hostSubtree(support.parent as string, report.pid);
    expect(subtree).toBeDefined();
    const exited = new Promise((r) => host.child.once("exit", r));
    host.child.kill("SIGKILL");
    await exited;
    expect(await eventually(() => !escapers.some(stillRunning))).toBe(true);
    expect(await eventually(() => !existsSync(subtree as string))).toBe(true);
  });
});

describe.runIf(canContain)("contained steps of a worker that ends", () => {
  it("a terminated worker's running contained step dies whole and its cgroup is removed", () => {
    const run = runHost<{ pids: number[]; alive: number[]; cgroups: string[] }>(
      dir,
      `
      import { existsSync, readdirSync, readFileSync } from "node:fs";
      const alive = (pid) => { try { return readFileSync("/proc/" + pid + "/stat", "utf8").split(") ")[1][0] !== "Z"; } catch { return false; } };
      ${stepInTerminatedWorker(STEP, "true")}
      const parent = ${JSON.stringify(support.parent)};
      const name = readdirSync(parent).find((entry) => entry.startsWith("exactspawn-" + process.pid + "-"));
      const subtree = parent + "/" + name;
      const cgroups = name !== undefined && existsSync(subtree) ? readdirSync(subtree, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name) : [];
      report({ pids, alive: pids.filter(alive), cgroups });
      `,
    );
    expect(run.stderr).toBe("");
    const r = run.report!;
    left.add(...r.pids);
    expect(r.pids).toHaveLength(3);
    expect(r.alive).toEqual([]);
    expect(r.cgroups).toEqual([]);
  });
});

describe.runIf(nativeStatus().loaded && isRoot && setpriv)(
  "a host that may not create a cgroup (run as nobody)",
  () => {
    it("refuses the cgroup mechanism with a ContainmentError; the default takes a PID namespace", () => {
      const run = runHost<{ code: string; missing: string[]; message: string; bash: unknown }>(
        dir,
        `
        import { createRuntime, spawn } from DIST;
        const error = await spawn("/bin/true", [], { contain: { mechanism: "cgroup" } }).then(() => null, (e) => e);
        const runtime = createRuntime({ parentEnv: { PATH: "/usr/bin:/bin" } });
        const bash = await runtime.bash("true");
        report({ code: error?.code, missing: error?.missing, message: error?.message, bash: bash.contained });
        `,
        {
          wrap: ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"],
          library: privateLibrary(dir),
        },
      );
      expect(run.stderr).toBe("");
      const r = run.report!;
      expect(r.code).toBe("ERR_EXACTSPAWN_CONTAINMENT_UNAVAILABLE");
      expect(r.missing).toEqual(["writable cgroup"]);
      expect(r.message).toMatch(/Delegate=yes/);
      expect(r.bash).toEqual({
        mechanism: "pid-namespace",
        userNamespace: true,
        limitEvents: null,
      });
    });
  },
);

interface Host {
  readonly child: ChildProcess;
  readonly report: Promise<{ pid: number; pids: number[] }>;
}

function startHost(source: string): Host {
  const child = spawn(
    process.execPath,
    ["--input-type=module", "-e", source.replaceAll("DIST", JSON.stringify(DIST_URL))],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  if (child.pid !== undefined) left.add(child.pid);
  let out = "";
  const report = new Promise<{ pid: number; pids: number[] }>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((l) => l.startsWith("REPORT "));
      if (line !== undefined) resolve(JSON.parse(line.slice(7)) as { pid: number; pids: number[] });
    });
    child.once("exit", () => reject(new Error("host ended early")));
  });
  return { child, report };
}
