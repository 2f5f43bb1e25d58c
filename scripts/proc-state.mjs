// What leak checks count, read from /proc (Linux): this process's open fds
// and pidfds, and the zombie children of a process. Plain JavaScript so the
// soak script, the fuzz fixture, fault hosts and the tests share one copy.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** Open fds of this process. */
export function openFdCount() {
  return readdirSync("/proc/self/fd").length;
}

/** Open pidfds of this process. */
export function pidfdCount() {
  let count = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === "anon_inode:[pidfd]") count++;
    } catch {
      // closed while listing
    }
  }
  return count;
}

/** Pids of the children of `parent` (default: this process) in state Z. */
export function zombieChildren(parent = process.pid) {
  const zombies = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z" && Number(fields[1]) === parent) zombies.push(Number(entry));
  }
  return zombies;
}
