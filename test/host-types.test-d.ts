/**
 * Type tests for host code (issue 20, item 8): everything a host writes
 * against is exported from the package entry and typed from its options.
 * Nothing here runs: `npm run typecheck` (tsc over test/) fails when a type
 * regresses. Before this file's change the imports below did not resolve
 * (the option and result types were not exported), SubprocessError.stdout
 * was always `string | Buffer | null`, `context: 42` compiled and
 * runtime.spawn refused Buffer arguments.
 */
import { Buffer } from "node:buffer";
import { expectTypeOf } from "vitest";
import {
  type BashStepOptions,
  type BashStepResult,
  type ContextInput,
  createRuntime,
  type EnvBudgetError,
  type InvalidEnvError,
  type RuntimeSpawnOptions,
  type SpawnError,
  type SpillError,
  type StepHandle,
  SubprocessError,
  type SubprocessErrorOf,
} from "../src/index.js";

const runtime = createRuntime();

// runtime.bash: a handle, awaitable to the typed result.
const step = runtime.bash("echo hi", { step: "s", values: { a: "1" } });
expectTypeOf(step).toEqualTypeOf<StepHandle<BashStepResult<string, string>>>();
expectTypeOf<Awaited<typeof step>["stdout"]>().toEqualTypeOf<string>();
expectTypeOf(step.lines("all")).toEqualTypeOf<AsyncGenerator<string, void, undefined>>();
expectTypeOf(step.pid).toEqualTypeOf<number | undefined>();
// A handle is a Promise for code that stored the old return value.
const stored: Promise<BashStepResult<string>> = runtime.bash("true");
void stored;
const quiet = runtime.bash("true", { stdio: ["ignore", "ignore", "pipe"] });
expectTypeOf<Awaited<typeof quiet>["stdout"]>().toEqualTypeOf<null>();
expectTypeOf<Awaited<typeof quiet>["stderr"]>().toEqualTypeOf<string>();

// Option types a host builds its own wrappers from.
const options: BashStepOptions = { context: { task: "x" }, killGraceMs: 500, all: true };
expectTypeOf(options.context).toEqualTypeOf<ContextInput | undefined>();
const spawnOptions: RuntimeSpawnOptions = { context: new Map([["k", "v"]]), step: "agent" };
void spawnOptions;
// @ts-expect-error context is a record or a Map, never a number
runtime.bash("true", { context: 42 });
// @ts-expect-error nor a string
runtime.spawn("true", [], { context: "abc" });
// @ts-expect-error runtime.spawn takes no values (docs/runtime.md says why)
runtime.spawn("true", [], { values: { a: "1" } });

// runtime.spawn takes spawn's argument types.
runtime.spawn("printf", ["%s", Buffer.from([0xff])]);
expectTypeOf<Parameters<typeof runtime.spawn>[1]>().toEqualTypeOf<
  ReadonlyArray<string | Buffer> | undefined
>();

// Errors: output typed like the result of the same options; step identity fields.
expectTypeOf<SubprocessErrorOf<{ encoding: "buffer" }>["stdout"]>().toEqualTypeOf<Buffer>();
expectTypeOf<SubprocessErrorOf<{ stdio: "inherit" }>["stdout"]>().toEqualTypeOf<null>();
expectTypeOf<SubprocessErrorOf<Record<never, never>>["stderr"]>().toEqualTypeOf<string>();
declare const caught: unknown;
if (SubprocessError.is<string>(caught)) {
  expectTypeOf(caught.stdout).toEqualTypeOf<string>();
  expectTypeOf(caught.step).toEqualTypeOf<string | undefined>();
  expectTypeOf(caught.correlationId).toEqualTypeOf<string | undefined>();
}
if (SubprocessError.is(caught)) {
  expectTypeOf(caught.stdout).toEqualTypeOf<string | Buffer | null>();
}
expectTypeOf<EnvBudgetError>().toHaveProperty("offenders");
expectTypeOf<SpillError>().toHaveProperty("variable");
expectTypeOf<SpawnError>().toHaveProperty("offenders");
expectTypeOf<InvalidEnvError>().toMatchTypeOf<TypeError>();
