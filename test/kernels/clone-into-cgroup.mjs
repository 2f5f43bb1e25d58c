// clone3(CLONE_INTO_CGROUP) seen from outside: this process moves into a cgroup of its own and
// sets its pids.max to what it holds, so no fork can be charged to it; a contained step (its
// cgroups under another parent) still starts, as the child is created in the step's cgroup. A
// child that moved itself after a plain clone (the fallback) would first be charged here: EAGAIN.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { spawn } from "../../dist/index.js";

const host = "/sys/fs/cgroup/kt-host";
const steps = "/sys/fs/cgroup/kt-steps";
mkdirSync(host, { recursive: true });
mkdirSync(steps, { recursive: true });
writeFileSync(`${host}/cgroup.procs`, String(process.pid));
// A first step, so that everything made once per host (the sub-tree, its watchdog) exists.
await spawn("/bin/true", [], { contain: { cgroupParent: steps } });
writeFileSync(`${host}/pids.max`, readFileSync(`${host}/pids.current`, "utf8").trim());
const outcome = {};
try {
  await spawn("/bin/true", [], { contain: { cgroupParent: steps } });
  outcome.contained = "ran";
} catch (error) {
  outcome.contained = `${error.code ?? ""} ${error.message}`;
}
try {
  await spawn("/bin/true", []);
  outcome.uncontained = "ran";
} catch (error) {
  outcome.uncontained = "refused";
  outcome.uncontainedError = `${error.code ?? error.errno ?? ""} ${error.syscall ?? ""}`.trim();
}
writeFileSync(`${host}/pids.max`, "max");
console.log(JSON.stringify(outcome));
