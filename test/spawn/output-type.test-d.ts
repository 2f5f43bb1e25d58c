/**
 * Type tests for results typed from their options (src/spawn/output-type.ts).
 * Nothing here runs: `npm run typecheck` (tsc over test/) fails when a typing
 * regresses. Each expectation was seen to fail by widening the type in turn
 * (OutputOf made `string | Buffer | null`; the slot rule, the encoding rule
 * and the buffer rule each removed once).
 */
import type { Buffer } from "node:buffer";
import { Readable } from "node:stream";
import { expectTypeOf } from "vitest";
import {
  createRuntime,
  type KernelPipe,
  type SpawnOptions,
  type SpawnResult,
  type Subprocess,
  spawn,
  spawnSync,
} from "../../src/index.js";

type Stdout<P> =
  P extends PromiseLike<infer R> ? (R extends { stdout: infer S } ? S : never) : never;
type Stderr<P> =
  P extends PromiseLike<infer R> ? (R extends { stderr: infer S } ? S : never) : never;

// spawn: utf8 (the default) → string; any other text encoding → string.
const plain = spawn("/bin/true");
expectTypeOf<Stdout<typeof plain>>().toEqualTypeOf<string>();
expectTypeOf<Stderr<typeof plain>>().toEqualTypeOf<string>();
expectTypeOf<Stdout<ReturnType<typeof spawn<{ encoding: "latin1" }>>>>().toEqualTypeOf<string>();

// encoding "buffer" → Buffer.
const bytes = spawn("/bin/cat", [], { encoding: "buffer", input: "x" });
expectTypeOf<Stdout<typeof bytes>>().toEqualTypeOf<Buffer>();
expectTypeOf<Stderr<typeof bytes>>().toEqualTypeOf<Buffer>();

// A stream that is not captured → null: "ignore", "inherit", an fd, a slot an
// array leaves out, or buffer: false.
const ignored = spawn("/bin/true", [], { stdio: "ignore" });
expectTypeOf<Stdout<typeof ignored>>().toEqualTypeOf<null>();
const inherited = spawn("/bin/true", [], { stdio: "inherit" });
expectTypeOf<Stderr<typeof inherited>>().toEqualTypeOf<null>();
const mixed = spawn("/bin/true", [], { stdio: ["ignore", "pipe", 2], encoding: "buffer" });
expectTypeOf<Stdout<typeof mixed>>().toEqualTypeOf<Buffer>();
expectTypeOf<Stderr<typeof mixed>>().toEqualTypeOf<null>();
const short = spawn("/bin/true", [], { stdio: ["ignore", "pipe"] });
expectTypeOf<Stdout<typeof short>>().toEqualTypeOf<string>();
expectTypeOf<Stderr<typeof short>>().toEqualTypeOf<null>();
const unbuffered = spawn("/bin/true", [], { buffer: false });
expectTypeOf<Stdout<typeof unbuffered>>().toEqualTypeOf<null>();
// A pipe between two children is not captured either; a stream input changes no output type.
declare const pipe: KernelPipe;
const piped = spawn("/bin/true", [], { stdio: ["ignore", pipe, "pipe"] });
expectTypeOf<Stdout<typeof piped>>().toEqualTypeOf<null>();
expectTypeOf<Stderr<typeof piped>>().toEqualTypeOf<string>();
const fed = spawn("/bin/cat", [], { stdio: [pipe, "pipe", "pipe"], input: undefined });
expectTypeOf<Stdout<typeof fed>>().toEqualTypeOf<string>();
const streamed = spawn("/bin/cat", [], { input: Readable.from(["x"]), encoding: "buffer" });
expectTypeOf<Stdout<typeof streamed>>().toEqualTypeOf<Buffer>();
// spawnSync takes only a whole input.
// @ts-expect-error a stream input needs spawn
spawnSync("/bin/cat", [], { input: Readable.from(["x"]) });

// Options whose types are not literal give the union of what they allow.
declare const someOptions: SpawnOptions;
const wide = spawn("/bin/true", [], someOptions);
expectTypeOf<Stdout<typeof wide>>().toEqualTypeOf<string | Buffer | null>();
declare const someEncoding: BufferEncoding | "buffer";
expectTypeOf<Stdout<ReturnType<typeof spawn<{ encoding: typeof someEncoding }>>>>().toEqualTypeOf<
  string | Buffer
>();

// The awaited value, .result and .then agree; a typed subprocess is still a Subprocess.
async function awaited(): Promise<void> {
  const result = await spawn("/bin/echo", ["x"]);
  expectTypeOf(result.stdout).toEqualTypeOf<string>();
  expectTypeOf(bytes.result).resolves.toHaveProperty("stdout").toEqualTypeOf<Buffer>();
  expectTypeOf(bytes).toMatchTypeOf<Subprocess>();
  expectTypeOf(result).toMatchTypeOf<SpawnResult>();
}

// Unknown options are type errors, and callbacks keep their parameter types.
// @ts-expect-error an unknown option next to known ones
spawn("/bin/true", [], { encoding: "buffer", encodin: "buffer" });
const runtime = createRuntime({ parentEnv: {} });
runtime.spawn("/bin/true", [], {
  onTrim: (dropped) => expectTypeOf(dropped[0]!.name).toEqualTypeOf<string>(),
});

// runtime.spawn follows spawn; runtime.bash has no encoding: string, or null when not captured.
expectTypeOf<
  Stdout<ReturnType<typeof runtime.spawn<{ encoding: "buffer" }>>>
>().toEqualTypeOf<Buffer>();
expectTypeOf<
  Stdout<ReturnType<typeof runtime.spawn<{ stdio: "inherit" }>>>
>().toEqualTypeOf<null>();
expectTypeOf(runtime.spawn("/bin/true").result)
  .resolves.toHaveProperty("stdout")
  .toEqualTypeOf<string>();
async function bash(): Promise<void> {
  const step = await runtime.bash("echo hi");
  expectTypeOf(step.stdout).toEqualTypeOf<string>();
  expectTypeOf(step.output).toEqualTypeOf<string>();
  const streamed = await runtime.bash("echo hi", { stdio: ["ignore", "inherit", "pipe"] });
  expectTypeOf(streamed.stdout).toEqualTypeOf<null>();
  expectTypeOf(streamed.stderr).toEqualTypeOf<string>();
  const bytes = await runtime.bash("echo hi", { encoding: "buffer" });
  expectTypeOf(bytes.stdout).toEqualTypeOf<Buffer>();
  expectTypeOf(bytes.output).toEqualTypeOf<string>();
  // @ts-expect-error a bash step always leads its own process group
  await runtime.bash("echo hi", { processGroup: false });
}

// Line iteration yields strings whatever the encoding.
async function lines(): Promise<void> {
  for await (const line of bytes) expectTypeOf(line).toEqualTypeOf<string>();
  for await (const line of bytes.lines("stderr")) expectTypeOf(line).toEqualTypeOf<string>();
}

export { awaited, bash, lines };

// spawnSync follows the same rules, on its result directly.
expectTypeOf(spawnSync("/bin/true").stdout).toEqualTypeOf<string>();
expectTypeOf(
  spawnSync("/bin/cat", [], { encoding: "buffer", input: "x" }).stderr,
).toEqualTypeOf<Buffer>();
expectTypeOf(
  spawnSync("/bin/true", [], { stdio: ["ignore", "pipe", "inherit"] }).stderr,
).toEqualTypeOf<null>();
expectTypeOf(
  spawnSync("/bin/true", [], { stdio: ["ignore", "pipe", "inherit"] }).stdout,
).toEqualTypeOf<string>();
// @ts-expect-error an option spawnSync does not know is a type error too.
spawnSync("/bin/true", [], { detached: true });
