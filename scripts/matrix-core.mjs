// The core behaviours, run by scripts/matrix.mjs under each runtime (Node of
// any version and architecture, Bun, Deno): which addon loaded (or why not),
// exact envp, async and sync spawn, exit code and signal delivery, a bash step
// whose 300 KB value is spilled, a sandboxed child, and a clean exit. Prints
// one JSON line: { status, file, steps: [{ name, ok, detail }] }. A step the
// platform cannot support is reported as skipped with its reason.
const dist = new URL("../dist/index.js", import.meta.url).href;
const { createRuntime, nativeStatus, sandboxSupport, spawn, spawnSync } = await import(dist);
const { locateAddon } = await import(new URL("../dist/native-locate.js", import.meta.url).href);
const root = new URL("..", import.meta.url).pathname;

const steps = [];
async function step(name, fn) {
  try {
    const detail = await fn();
    if (detail && typeof detail === "object" && "skipped" in detail) {
      steps.push({ name, ok: null, detail: detail.skipped });
    } else steps.push({ name, ok: true, detail: detail ?? "" });
  } catch (error) {
    steps.push({ name, ok: false, detail: String(error?.message ?? error).split("\n")[0] });
  }
}
const expectEqual = (actual, expected, what) => {
  if (actual !== expected) {
    throw new Error(`${what}: ${JSON.stringify(actual)} != ${JSON.stringify(expected)}`);
  }
};

const status = nativeStatus();
await step("spawn: exact envp", async () => {
  const run = await spawn("/usr/bin/env", [], { env: { ONLY: "this", EMPTY: "" } });
  expectEqual(String(run.stdout), "ONLY=this\nEMPTY=\n", "env output");
});
await step("spawn: exit code", async () => {
  const run = await spawn("/bin/sh", ["-c", "exit 7"], { reject: false });
  expectEqual(run.exitCode, 7, "exit code");
});
await step("spawn: signal delivery", async () => {
  const child = spawn("/bin/sleep", ["30"], { reject: false });
  setTimeout(() => child.kill("SIGTERM"), 50);
  const run = await child;
  expectEqual(run.signal, "SIGTERM", "signal");
});
await step("spawnSync", () => {
  const run = spawnSync("/bin/sh", ["-c", "echo out; exit 3"], { reject: false });
  expectEqual(run.exitCode, 3, "exit code");
  expectEqual(String(run.stdout), "out\n", "stdout");
});
await step("bash step: 300 KB value spilled", async () => {
  const big = "v".repeat(300_000);
  const runtime = createRuntime();
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash parameter expansion
  const result = await runtime.bash('printf %s "${#RECIPE_VAR_big}"', { values: { big } });
  expectEqual(String(result.output).trim(), "300000", "length seen by the step");
  if (!result.spilled.some(({ name }) => name === "RECIPE_VAR_big")) throw new Error("not spilled");
  return `spilled ${result.spilled.length}`;
});
await step("sandbox: write outside refused", async () => {
  const support = sandboxSupport();
  if (support.missing.length > 0) {
    return { skipped: `cannot be enforced here: ${support.missing.join(", ")}` };
  }
  const run = await spawn("/bin/sh", ["-c", "echo x > /tmp/exactspawn-matrix-denied"], {
    sandbox: { writable: [] },
    reject: false,
  });
  if (run.exitCode === 0) throw new Error("the write outside the sandbox succeeded");
  return `exit ${run.exitCode}`;
});
console.log(
  JSON.stringify({
    status: { loaded: status.loaded, reason: status.reason ?? null, platform: status.platform },
    file: status.loaded ? (locateAddon(root).path ?? null) : null,
    steps,
  }),
);
