// The core behaviours, run by scripts/matrix.mjs under each runtime (Node of
// any version and architecture, Bun, Deno): the package by its name through
// both `import` and `require`, which addon loaded (the file the dynamic loader
// mapped, or why none), exact envp, async and sync spawn, exit code and signal
// delivery, output streamed while the child runs (a step's lines(), for await
// over a subprocess, a "data" listener), a bash step whose 300 KB value is
// spilled, a sandboxed child, and a clean exit. Prints one JSON line:
// { status, file, steps: [{ name, ok, detail }] }. A step the platform cannot
// support is reported as skipped with its reason; one that does not settle
// within STEP_SECONDS fails as such, and the script then exits at once.
import { createRequire } from "node:module";

const STEP_SECONDS = 30;
const imported = await import("exactspawn");
const { createRuntime, nativeStatus, sandboxSupport, spawn, spawnSync } = imported;

const steps = [];
let hung = false;
async function step(name, fn) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => {
      hung = true;
      reject(new Error(`did not settle within ${STEP_SECONDS} s`));
    }, STEP_SECONDS * 1000);
  });
  try {
    const detail = await Promise.race([fn(), limit]);
    if (detail && typeof detail === "object" && "skipped" in detail) {
      steps.push({ name, ok: null, detail: detail.skipped });
    } else steps.push({ name, ok: true, detail: detail ?? "" });
  } catch (error) {
    steps.push({ name, ok: false, detail: String(error?.message ?? error).split("\n")[0] });
  } finally {
    clearTimeout(timer);
  }
}
const expectEqual = (actual, expected, what) => {
  if (actual !== expected) {
    throw new Error(`${what}: ${JSON.stringify(actual)} != ${JSON.stringify(expected)}`);
  }
};

const status = nativeStatus();
await step("require and import by name", () => {
  const required = createRequire(import.meta.url)("exactspawn");
  expectEqual(required.spawn, imported.spawn, "require('exactspawn').spawn");
});
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
await step("stream: step.lines()", async () => {
  const lines = [];
  for await (const line of createRuntime().bash("echo one; echo two").lines()) lines.push(line);
  expectEqual(lines.join(","), "one,two", "lines");
});
await step("stream: for await over a subprocess", async () => {
  const lines = [];
  for await (const line of spawn("/bin/sh", ["-c", "echo a; echo b"])) lines.push(line);
  expectEqual(lines.join(","), "a,b", "lines");
});
await step('stream: stdout.on("data")', async () => {
  // The child writes late, so the stream meets the captured (non-blocking) pipe empty
  // first (Bun's fs streams fail there with EAGAIN); the pass does not depend on it.
  const child = spawn("/bin/sh", ["-c", "sleep 0.2; echo data"]);
  const chunks = [];
  child.stdout.on("data", (chunk) => chunks.push(String(chunk)));
  await child;
  expectEqual(chunks.join(""), "data\n", "data");
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
    file: status.file ?? null,
    steps,
  }),
);
if (hung) process.exit(1);
