// bun-anchor.mjs — the runtime peer of the spawn benchmarks, run by Bun
// itself: Bun.spawn of a program COUNT times, INFLIGHT at a time, each
// awaited through `exited` (the same asynchronous job spawn() does in Node).
// Usage: bun bench/bun-anchor.mjs ignore|capture COUNT INFLIGHT PROGRAM
//        [ENV_COUNT ENV_BYTES]
// The optional environment is the C loop's (bench/spawn_loop.c): ENV_COUNT
// strings "V%05d=xxx…" of ENV_BYTES bytes each. Prints, like the C loop, the
// elapsed wall time and this process's own CPU time in nanoseconds.
// A discarded warm-up of COUNT spawns comes first: JavaScriptCore compiles
// the loop while it is new, as V8 does for the Node side's discarded round.
const [mode, countText, inflightText, program, envCount = "0", envBytes = "0"] =
  process.argv.slice(2);
const count = Number(countText);
const inflight = Number(inflightText);

const env = {};
for (let i = 0; i < Number(envCount); i++) {
  const name = `V${String(i).padStart(5, "0")}`;
  env[name] = "x".repeat(Number(envBytes) - name.length - 1);
}

const capture = mode === "capture";
const one = async () => {
  const child = Bun.spawn([program], {
    env,
    stdin: "ignore",
    stdout: capture ? "pipe" : "ignore",
    stderr: capture ? "pipe" : "ignore",
  });
  if (capture) {
    await Promise.all([
      new Response(child.stdout).arrayBuffer(),
      new Response(child.stderr).arrayBuffer(),
    ]);
  }
  await child.exited;
};

async function loop() {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: inflight }, lane));
}

await loop();
const c0 = process.cpuUsage();
const t0 = Bun.nanoseconds();
await loop();
const elapsed = Bun.nanoseconds() - t0;
const used = process.cpuUsage(c0);
console.log(`${elapsed} ${(used.user + used.system) * 1000}`);
