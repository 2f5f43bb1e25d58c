// Run by run.mjs in a mount namespace where a bind mount of a cgroup2 sub-directory is listed
// before the mount of the hierarchy's root: only the root's mount maps /proc/self/cgroup's paths.
import { cgroupSupport, spawn } from "../../dist/index.js";

const { parent } = cgroupSupport();
const result = await spawn("/bin/true", [], { contain: true, reject: false });
console.log(JSON.stringify({ parent, exitCode: result.exitCode }));
