/**
 * `runtime.spawn(file, args, options)`: an agent-style child of a runtime.
 * Its environment is the runtime's layered environment without step values
 * (inherited base, context, session, overlay, extra, host, grants,
 * correlation), trimmed by boundedEnv to fit with the real argv. The file is
 * resolved against the parent's PATH snapshot, never the child's.
 *
 * An argv string over MAX_ARG_STRLEN (a huge prompt) is rejected before
 * anything starts, naming its index and size: pass such text by file or
 * stdin (`input`) instead — see docs/runtime.md.
 */
import { Buffer } from "node:buffer";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { boundedEnv, measureArgv, measureEnv } from "../env/bounded-env.js";
import type { ContextInput } from "../env/context-export.js";
import { inheritedNames, type LayeredEnv, untrustedNames } from "../env/layers.js";
import type { ArgvSize } from "../env/spill-plan.js";
import { assertRecordOrMap } from "../env/untrusted-keys.js";
import { InvalidEnvError, type SizedName } from "../errors.js";
import { assertKnownOptions, knownKeys, ownProperties } from "../known-options.js";
import { assertLimitsOption, limitsWithChildStack, POINTER_BYTES, probeLimits } from "../limits.js";
import { type Logger, silentLogger } from "../log.js";
import { shebangCost } from "../shebang.js";
import { childStackSoft, normalizeExecControls } from "../spawn/exec-controls.js";
import { releasePipeEnds } from "../spawn/kernel-pipe.js";
import { resolveFile } from "../spawn/resolve-file.js";
import { failedBeforeStart, spawn } from "../spawn/spawn.js";
import type { Subprocess } from "../spawn/subprocess.js";
import {
  logStepEnd,
  logStepStart,
  stepIdentity,
  stepLogger,
  tagStepError,
} from "./step-identity.js";
import {
  STEP_ENVELOPE_KEYS,
  STEP_SPAWN_OPTION_KEYS,
  type StepEnvelopeOptions,
  type StepSpawnOptions,
} from "./step-options.js";
import { handleUntrustedSkips, reportDrops, type UntrustedSkips } from "./untrusted-skips.js";

export interface RuntimeSpawnHost {
  readonly parentPath: () => string | undefined;
  readonly buildEnv: (options: {
    context?: ContextInput;
    extra?: Readonly<Record<string, string | undefined>> | ReadonlyMap<string, string>;
    correlationId?: string;
  }) => LayeredEnv;
  readonly protected: { readonly names: readonly string[]; readonly prefixes: readonly string[] };
  /** The runtime's logger for trim notices; undefined: the library logger. */
  readonly logger?: Logger | undefined;
  /** The runtime's correlation id (step-identity.ts). */
  readonly correlationId?: string | undefined;
  /** What a skipped untrusted entry does (undefined: "report"). */
  readonly untrustedSkips?: UntrustedSkips | undefined;
  /** Called as each child starts: the runtime's first-use notice (inherit-notice.ts). */
  readonly firstUse?: ((log: Logger) => void) | undefined;
}

/** runtime.spawn's options: the step envelope, spawn's controls (step-options.ts), and its own. */
export interface RuntimeSpawnOptions extends StepEnvelopeOptions, StepSpawnOptions {
  /** Called with the inherited variables trimmed to fit (names and sizes): pressure from trusted layers only. */
  readonly onTrim?: (dropped: readonly SizedName[]) => void;
  /** Called with the context entries skipped to fit (names and sizes; reason "aggregate_env_budget"). */
  readonly onSkip?: (skipped: readonly SizedName[]) => void;
}

/** runtime.spawn's keys: the envelope, spawn's except `env` and `path` (the runtime decides both), its own. */
export const RUNTIME_SPAWN_OPTION_KEYS: ReadonlySet<string> = knownKeys<
  Omit<RuntimeSpawnOptions, keyof StepEnvelopeOptions | keyof StepSpawnOptions>
>({ onTrim: true, onSkip: true }, STEP_ENVELOPE_KEYS, STEP_SPAWN_OPTION_KEYS);

/**
 * The bytes the kernel's #! loader will add when `file` is a script (0 for a
 * binary); the file is read only when the plain image is near the limit.
 */
function scriptCost(
  file: string,
  cwd: string | undefined,
  argv0: string,
  argv: ArgvSize,
  sizes: ReadonlyMap<string, number>,
  limit: number,
): number {
  const filenameBytes = Buffer.byteLength(file, "utf8") + 1;
  let plain = filenameBytes + argv.bytes + POINTER_BYTES * Math.max(argv.argc, 1);
  for (const bytes of sizes.values()) plain += bytes + POINTER_BYTES;
  const argv0Bytes = Buffer.byteLength(argv0, "utf8") + 1;
  return shebangCost(file, resolve(cwd ?? "."), { plain, filenameBytes, argv0Bytes }, limit).bytes;
}

/** Throws InvalidEnvError naming each argv string over the per-string limit (index and size). */
export function assertArgvStrings(
  argv: ReadonlyArray<string | Buffer>,
  maxArgStrlen: number,
): void {
  const over = argv
    .map((arg, index) => ({ index, bytes: Buffer.byteLength(arg, "utf8") + 1 }))
    .filter((a) => a.bytes > maxArgStrlen);
  if (over.length === 0) return;
  const list = over.map((a) => `argv[${a.index}] (${a.bytes} bytes)`).join(", ");
  throw new InvalidEnvError(
    `spawn: ${list} over the per-string limit of ${maxArgStrlen} bytes; ` +
      "pass large text through a file or stdin (the input option), not argv",
  );
}

/**
 * See the module comment. A TypeError (a bad option, an argv string over
 * the limit) is thrown; what the run meets before it starts (no such file,
 * a budget that cannot be met) rejects the Subprocess. Every error, thrown or rejected, carries the call's
 * `step` and `correlationId`; start and end are logged (step-identity.ts).
 */
export function runtimeSpawn(
  host: RuntimeSpawnHost,
  file: string,
  args: ReadonlyArray<string | Buffer>,
  callerOptions: RuntimeSpawnOptions = {},
): Subprocess {
  // Own properties only, each read once: nothing below reads the caller's object again.
  const options = ownProperties(callerOptions);
  const given = options as Partial<RuntimeSpawnOptions> | null;
  const identity = stepIdentity(given?.step, given?.correlationId, host.correlationId);
  const log = stepLogger(host.logger, identity);
  const startedAt = performance.now();
  host.firstUse?.(log);
  let child: Subprocess;
  try {
    child = startChild(host, file, args, options, log);
  } catch (error) {
    // A pipe end given to a call that never reached spawn is closed all the same.
    releasePipeEnds(given?.stdio);
    // As spawn: a TypeError (bad option or argument) is thrown; what the run
    // meets before it starts (no such file, a budget) rejects the Subprocess.
    if (error instanceof TypeError) {
      logStepEnd(log, "spawn", undefined, startedAt, { ok: false, error });
      throw tagStepError(error, identity);
    }
    child = failedBeforeStart(error);
  }
  const pid = child.pid;
  if (pid !== undefined) logStepStart(log, "spawn", { childPid: pid });
  // The first reaction on the result: the host's own (registered later) sees the tagged error.
  child.result.then(
    (value) => logStepEnd(log, "spawn", pid, startedAt, { ok: true, value }),
    (error: unknown) => {
      logStepEnd(log, "spawn", pid, startedAt, { ok: false, error });
      tagStepError(error, identity);
    },
  );
  return child;
}

function startChild(
  host: RuntimeSpawnHost,
  file: string,
  args: ReadonlyArray<string | Buffer>,
  options: RuntimeSpawnOptions,
  log: Logger,
): Subprocess {
  if (options === null || typeof options !== "object") {
    throw new TypeError("runtime.spawn: options must be an object");
  }
  assertKnownOptions(options, RUNTIME_SPAWN_OPTION_KEYS, "runtime.spawn");
  for (const key of ["onTrim", "onSkip"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "function") {
      throw new TypeError(`runtime.spawn: options.${key} must be a function`);
    }
  }
  assertLimitsOption(options.limits, "runtime.spawn");
  assertRecordOrMap(options.context, "runtime.spawn: options.context");
  const {
    context,
    extra,
    correlationId,
    step: _step,
    limits: given,
    onTrim,
    onSkip,
    ...spawnOptions
  } = options;
  // The child's own stack limit, when it sets one, sizes its exec (rlimits.stack):
  // the environment is bounded against it, not only against the host's.
  // Read from `options` (own properties, nothing inherited), never from the rest
  // object, which has one: a key the call lacks must not be inherited.
  const limits = limitsWithChildStack(
    given ?? probeLimits(),
    childStackSoft(normalizeExecControls(options)),
  );
  const argv0 = typeof options.argv0 === "string" ? options.argv0 : file;
  assertArgvStrings([argv0, ...args], limits.maxArgStrlen);
  const resolved = resolveFile(file, host.parentPath(), options.cwd ?? process.cwd());
  const layered = host.buildEnv({
    ...(context === undefined ? {} : { context }),
    ...(extra === undefined ? {} : { extra }),
    ...(correlationId === undefined ? {} : { correlationId }),
  });
  const argv = measureArgv([argv0, ...args]);
  const sizes = measureEnv(layered.env);
  const script = scriptCost(resolved, options.cwd, argv0, argv, sizes, limits.execLimit);
  const bounded = boundedEnv({
    env: layered.env,
    inheritedNames: inheritedNames(layered),
    untrustedNames: untrustedNames(layered),
    protected: host.protected,
    file: resolved,
    // A #! rewrite adds strings but no pointers: more bytes, the same argc.
    argv: { ...argv, bytes: argv.bytes + script },
    limits,
    sizes,
    // Quiet: reported below once per reason, with the call's identity.
    log: silentLogger(),
  });
  handleUntrustedSkips(
    [
      ...layered.skipped.map((s) => ({
        name: s.layer === "step" ? s.key : s.name,
        reason: s.reason,
      })),
      ...bounded.skipped.map((s) => ({ name: s.name, reason: "aggregate_env_budget" })),
    ],
    host.untrustedSkips,
    log,
    "runtime.spawn",
  );
  reportDrops(
    log,
    bounded.dropped.map((d) => ({ ...d, reason: "trimmed" })),
  );
  if (bounded.skipped.length > 0) onSkip?.(bounded.skipped);
  if (bounded.dropped.length > 0) onTrim?.(bounded.dropped);
  return spawn(resolved, args, { ...spawnOptions, argv0, env: bounded.env });
}
