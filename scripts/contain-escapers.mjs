#!/usr/bin/env node
// How many of a step's escapers are still running 1 s after the step ends, per
// way of ending and per containment mechanism (docs/containment.md): a bash
// step starts a `setsid` daemon, a double fork and a `nohup` job (each a
// `sleep` tagged with this run's pid), then times out (700 ms), exits, or has
// its host SIGKILLed (a host with `cleanup: true`). Whatever is found is
// killed. Run it as root or as another user (`setpriv --reuid=nobody
// --regid=nogroup --clear-groups node scripts/contain-escapers.mjs …`).
// Usage: npm run compile, then node scripts/contain-escapers.mjs none|cgroup|pid-namespace
// Prints one JSON line: {uid, mechanism, timeout, leaderExit, hostKilled}.
import { spawn as spawnChild } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { spawn } from "../dist/index.js";

const mech = process.argv[2];
const contain = mech === "none" ? false : { mechanism: mech };
const env = { PATH: "/usr/bin:/bin" };
const script = (tag) =>
  `setsid sleep 1000${tag} & ( (sleep 1001${tag} &) & ) ; nohup sleep 1002${tag} >/dev/null 2>&1 & sleep 0.3; echo up`;
const left = (tag) => {
  let n = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(tag)) {
        n++;
        process.kill(Number(pid), "SIGKILL");
      }
    } catch {}
  }
  return n;
};
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
const out = {};
let tag = `.${process.pid}1`;
await spawn("/bin/bash", ["-c", `${script(tag)}; sleep 5`], {
  env,
  contain,
  timeout: 700,
  reject: false,
  setsid: true,
  stdio: "ignore",
});
await pause(1000);
out.timeout = left(tag);
tag = `.${process.pid}2`;
await spawn("/bin/bash", ["-c", script(tag)], {
  env,
  contain,
  reject: false,
  setsid: true,
  stdio: "ignore",
});
await pause(1000);
out.leaderExit = left(tag);
tag = `.${process.pid}3`;
const dist = new URL("../dist/index.js", import.meta.url).href;
const hostCode = `import { spawn } from ${JSON.stringify(dist)};
const s = spawn("/bin/bash", ["-c", ${JSON.stringify(`${script(tag)}; sleep 30`)}], { env: ${JSON.stringify(env)}, contain: ${JSON.stringify(contain)}, cleanup: true, setsid: true, reject: false, stdio: "ignore" });
setTimeout(() => process.stdout.write("up\\n"), 800);`;
const host = spawnChild(process.execPath, ["--input-type=module", "-e", hostCode], {
  stdio: ["ignore", "pipe", "inherit"],
});
await new Promise((r) => host.stdout.once("data", r));
host.kill("SIGKILL");
await new Promise((r) => host.once("exit", r));
await pause(1000);
out.hostKilled = left(tag);
console.log(JSON.stringify({ uid: process.getuid(), mechanism: mech, ...out }));
