/**
 * Two hosts with the same pid (each in a PID namespace of its own, without a
 * cgroup namespace: `unshare --pid`, bwrap, a container that shares the
 * machine's cgroups) each get a cgroup sub-tree of their own: both contained
 * steps start, and when one host is SIGKILLed its watchdog kills its own
 * steps only — the other host's step keeps running (issue 35, finding 4).
 *
 * Each host runs as pid 2 under a small init (pid 1) that relays its output
 * and, once the host is gone, waits until every other process of the
 * namespace has ended — the host's watchdog included, so its work is done
 * before the namespace ends and the test looks.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cgroupSupport, nativeStatus } from "../../src/index.js";
import { DIST_URL, removeDir, scratchDir } from "../faults/host.js";
import { pidNamespaceMissing } from "../fixtures/pid-namespace.js";

const canRun =
  nativeStatus().loaded && cgroupSupport().available && pidNamespaceMissing === undefined;

let dir: string;
beforeAll(() => {
  dir = scratchDir("exactspawn-same-pid-");
});
afterAll(() => removeDir(dir));

/** pid 1: runs the host, then waits for the namespace's other processes to end. */
const INIT = `
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
const running = (name) => {
  try {
    const stat = readFileSync("/proc/" + name + "/stat", "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch { return false; }
};
const others = () => readdirSync("/proc").filter((n) => /^\\d+$/.test(n) && n !== "1" && running(n));
const host = spawn(process.execPath, [process.argv[2]], { stdio: "inherit" });
host.once("exit", async (code, signal) => {
  while (others().length > 0) await new Promise((r) => setTimeout(r, 20));
  console.log("GONE " + JSON.stringify({ code, signal }));
  process.exit(0);
});
`;

/** A host: one contained step (`sleep`), its cgroup reported; then `then`. */
const host = (then: string) => `
import { spawn } from ${JSON.stringify(DIST_URL)};
import { readFileSync } from "node:fs";
const report = (value) => console.log("REPORT " + JSON.stringify(value));
const step = spawn("/bin/sleep", ["1000"], { contain: { mechanism: "cgroup" }, reject: false });
let settled = null;
const failed = step.then((r) => { settled = r.signal ?? r.exitCode; }, (error) => error);
if (step.pid === undefined) {
  const error = await failed;
  report({ pid: process.pid, code: error.code, syscall: error.syscall, path: error.path });
} else {
  report({ pid: process.pid, cgroup: readFileSync("/proc/" + step.pid + "/cgroup", "utf8").trim() });
}
${then}
`;

interface Run {
  readonly child: ChildProcess;
  line(prefix: string): Promise<Record<string, unknown>>;
}

function inPidNamespace(name: string, source: string): Run {
  const init = join(dir, `init-${name}.mjs`);
  const main = join(dir, `host-${name}.mjs`);
  writeFileSync(init, INIT);
  writeFileSync(main, source);
  const child = spawn(
    "unshare",
    ["--pid", "--fork", "--kill-child", "--mount-proc", process.execPath, init, main],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  let out = "";
  const waiters: Array<() => void> = [];
  child.stdout!.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    for (const waiter of waiters.splice(0)) waiter();
  });
  const line = (prefix: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const look = () => {
        const found = out.split("\n").find((l) => l.startsWith(`${prefix} `));
        if (found !== undefined) resolve(JSON.parse(found.slice(prefix.length + 1)));
        else if (child.exitCode !== null || child.signalCode !== null)
          reject(new Error(`${name} ended without ${prefix}: ${out}`));
        else waiters.push(look);
      };
      child.once("exit", look);
      look();
    });
  return { child, line };
}

describe.runIf(canRun)("two hosts with the same pid (PID namespaces of their own, as root)", () => {
  it("each gets a sub-tree of its own; SIGKILL of one leaves the other's step running", async () => {
    // Host A keeps its step until asked, then says whether it still runs.
    const a = inPidNamespace(
      "a",
      host(`
      process.stdin.once("data", () => {
        console.log("CHECK " + JSON.stringify({ running: settled === null && readFileSync("/proc/" + step.pid + "/stat", "utf8").split(") ")[1][0] !== "Z", settled }));
        step.kill("SIGKILL");
        step.then(() => process.exit(0));
      });`),
    );
    try {
      const first = await a.line("REPORT");
      // Host B starts its step with the same pid, then dies by SIGKILL.
      const b = inPidNamespace("b", host(`process.kill(process.pid, "SIGKILL");`));
      const second = await b.line("REPORT");
      const gone = await b.line("GONE");
      expect(gone).toEqual({ code: null, signal: "SIGKILL" });
      a.child.stdin!.write("check\n");
      const after = await a.line("CHECK");
      expect(first["pid"]).toBe(second["pid"]);
      expect({ second: second["code"], after }).toEqual({
        second: undefined,
        after: { running: true, settled: null },
      });
      expect(first["cgroup"]).not.toBe(second["cgroup"]);
    } finally {
      a.child.kill("SIGKILL");
    }
  });
});
