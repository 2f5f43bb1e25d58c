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
import { boundedEnv } from "../env/bounded-env.js";
import { contextNames, inheritedNames, type LayeredEnv } from "../env/layers.js";
import { InvalidEnvError, type SizedName } from "../errors.js";
import { type Limits, probeLimits } from "../limits.js";
import type { Logger } from "../log.js";
import { resolveFile } from "../spawn/resolve-file.js";
import { spawn } from "../spawn/spawn.js";
import type { SpawnOptions } from "../spawn/spawn-options.js";
import type { Subprocess } from "../spawn/subprocess.js";

export interface RuntimeSpawnHost {
  readonly parentPath: () => string | undefined;
  readonly buildEnv: (options: {
    context?: unknown;
    extra?: Readonly<Record<string, string | undefined>> | ReadonlyMap<string, string>;
    correlationId?: string;
  }) => LayeredEnv;
  readonly protected: { readonly names: readonly string[]; readonly prefixes: readonly string[] };
  /** The runtime's logger for trim notices; undefined: the library logger. */
  readonly logger?: Logger | undefined;
}

export interface RuntimeSpawnOptions extends Omit<SpawnOptions, "env" | "path"> {
  /** Untrusted context, exported through the runtime's context policy. */
  readonly context?: unknown;
  /** Trusted per-call variables. */
  readonly extra?: Readonly<Record<string, string | undefined>> | ReadonlyMap<string, string>;
  readonly correlationId?: string;
  readonly limits?: Pick<Limits, "execLimit" | "maxArgStrlen">;
  /** Called with the inherited variables trimmed to fit (names and sizes): pressure from trusted layers only. */
  readonly onTrim?: (dropped: readonly SizedName[]) => void;
  /** Called with the context entries skipped to fit (names and sizes; reason "aggregate_env_budget"). */
  readonly onSkip?: (skipped: readonly SizedName[]) => void;
}

/** Throws InvalidEnvError naming each argv string over the per-string limit (index and size). */
export function assertArgvStrings(argv: readonly string[], maxArgStrlen: number): void {
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

/** See the module comment. Synchronous errors (bad argv, budget) throw before anything starts. */
export function runtimeSpawn(
  host: RuntimeSpawnHost,
  file: string,
  args: readonly string[],
  options: RuntimeSpawnOptions = {},
): Subprocess {
  const { context, extra, correlationId, limits: given, onTrim, onSkip, ...spawnOptions } = options;
  const limits = given ?? probeLimits();
  const argv0 = typeof spawnOptions.argv0 === "string" ? spawnOptions.argv0 : file;
  assertArgvStrings([argv0, ...args], limits.maxArgStrlen);
  const resolved = resolveFile(file, host.parentPath(), spawnOptions.cwd ?? process.cwd());
  const layered = host.buildEnv({
    ...(context === undefined ? {} : { context }),
    ...(extra === undefined ? {} : { extra }),
    ...(correlationId === undefined ? {} : { correlationId }),
  });
  const bounded = boundedEnv({
    env: layered.env,
    inheritedNames: inheritedNames(layered),
    untrustedNames: contextNames(layered),
    protected: host.protected,
    file: resolved,
    argv: [argv0, ...args],
    limits,
    ...(host.logger === undefined ? {} : { log: host.logger }),
  });
  if (bounded.skipped.length > 0) onSkip?.(bounded.skipped);
  if (bounded.dropped.length > 0) onTrim?.(bounded.dropped);
  return spawn(resolved, args, { ...spawnOptions, argv0, env: bounded.env });
}
