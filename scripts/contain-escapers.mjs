#!/usr/bin/env node
// How many of a step's escapers are still running 1 s after the step ends, per
// way of ending and per containment mechanism (docs/containment.md): a bash
// step starts a `setsid` daemon, a double fork and a `nohup` job (each a
// `sleep` tagged with this run's pid), then times out (700 ms), exits, or has
// its host SIGKILLed (a host with `cleanup: true`). What is found ends by
// itself (each escaper is a short sleep). Run it as root or as another user
// (`setpriv --reuid=nobody --regid=nogroup --clear-groups node scripts/contain-escapers.mjs …`).
// Usage: npm run compile, then node scripts/contain-escapers.mjs none|cgroup|pid-namespace
// Prints one JSON line: {uid, mechanism, timeout, leaderExit, hostKilled}.
import { spawn as spawnChild } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { spawn } from "../dist/index.js";

const mech = process.argv[2];
const contain = mech === "none" ? false : { mechanism: mech };
const env = { PATH: "/usr/bin:/bin" };
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
// Each escaper is a `sleep` of a little over 6 s whose argument carries the tag
// ("6.<pid><case>"): long enough to be seen 1 s after its step ended, short
// enough to end by itself (nothing here signals a pid found in /proc, which
// could have been reused by then).
const script = (tag) =>
  `setsid sleep 6${tag} & ( (sleep 6${tag} &) & ) ; nohup sleep 6${tag} >/dev/null 2>&1 & sleep 0.3; echo up`;
const running = (tag) =>
  readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(`sleep\u00006${tag}`);
      } catch {
        return false;
      }
    }).length;
const left = async (tag) => {
  const n = running(tag);
  while (running(tag) > 0) await pause(200); // the escapers end by themselves
  return n;
};
/** Runs one step with the escapers; returns how many are left 1 s after it settled. */
async function stepEnding(tag, tail, options) {
  const step = { env, contain, reject: false, setsid: true, stdio: "ignore", ...options };
  await spawn("/bin/bash", ["-c", `${script(tag)}${tail}`], step);
  await pause(1000);
  return left(tag);
}
const out = {};
out.timeout = await stepEnding(`.${process.pid}1`, "; sleep 5", { timeout: 700 });
out.leaderExit = await stepEnding(`.${process.pid}2`, "", {});
const tag = `.${process.pid}3`;
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
out.hostKilled = await left(tag);
console.log(JSON.stringify({ uid: process.getuid(), mechanism: mech, ...out }));
