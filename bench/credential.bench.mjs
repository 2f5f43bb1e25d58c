#!/usr/bin/env node
// What a child that changes its credentials costs against a plain one, with
// the host holding 0 and 1 GiB of touched memory (issue 27, finding 2): such
// a child is a vfork child that execs the exec helper, which changes the uid
// and execs the target, so its cost should not grow with the host's memory.
//   per spawn   sequential spawn("/bin/true") through the whole library,
//               interleaved rounds (one discarded warm-up round each):
//               median wall ms per spawn, plain and with `uid`/`gid` (the
//               host's own ids, so no privilege is needed), and their ratio
//   loop stall  200 spawns started in one tick: the ms from the first
//               spawn() call until a setImmediate queued before them runs
//               (what the event loop could not do meanwhile), median of rounds
// Usage: node bench/credential.bench.mjs [spawnsPerRound=200] [rounds=5] [heldMiB=0,1024]
// (needs npm run compile and a native build)
import { spawn } from "../dist/index.js";
import { median, pairedRatio } from "./stats.mjs";

const count = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 5);
const held = (process.argv[4] ?? "0,1024").split(",").map(Number);
const ids = { uid: process.getuid(), gid: process.getgid() };

const kinds = { plain: {}, uid: ids };

/** Median-free: wall ms per spawn over one round of `count` sequential spawns. */
async function perSpawn(options) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await spawn("/bin/true", [], options);
  return Number(process.hrtime.bigint() - t0) / 1e6 / count;
}

/** ms the loop stood still while 200 spawns were started in one tick. */
async function stall(options) {
  let t0 = 0n;
  const turned = new Promise((resolve) =>
    setImmediate(() => resolve(Number(process.hrtime.bigint() - t0) / 1e6)),
  );
  t0 = process.hrtime.bigint();
  const runs = [];
  for (let i = 0; i < 200; i++) runs.push(spawn("/bin/true", [], options));
  const ms = await turned;
  await Promise.all(runs);
  return ms;
}

let hold = null;
for (const mib of held) {
  hold = null;
  if (mib > 0) {
    hold = Buffer.allocUnsafe(mib * 1024 * 1024);
    hold.fill(1); // touched: every page is the host's
  }
  const samples = { plain: [], uid: [], stallPlain: [], stallUid: [] };
  for (let r = 0; r <= rounds; r++) {
    const keep = r > 0; // round 0 warms up
    for (const [name, options] of Object.entries(kinds)) {
      const ms = await perSpawn(options);
      if (keep) samples[name].push(ms);
    }
    const plainStall = await stall({});
    const uidStall = await stall(ids);
    if (keep) {
      samples.stallPlain.push(plainStall);
      samples.stallUid.push(uidStall);
    }
  }
  const f = (n) => n.toFixed(2);
  console.log(
    `held ${mib} MiB: per spawn plain ${f(median(samples.plain))} ms, uid ${f(median(samples.uid))} ms ` +
      `(uid/plain ${f(pairedRatio(samples.uid, samples.plain))}); ` +
      `200 in one tick: loop stall plain ${f(median(samples.stallPlain))} ms, ` +
      `uid ${f(median(samples.stallUid))} ms (uid/plain ${f(pairedRatio(samples.stallUid, samples.stallPlain))})`,
  );
}
if (hold !== null) hold = null;
