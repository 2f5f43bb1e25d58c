/**
 * createRuntime(): one host's environment policy, validated and snapshotted
 * once, and the front door every child environment is built through.
 *
 * Everything the caller passes is copied and frozen at construction: later
 * changes to the caller's objects (including process.env) have no effect on
 * this runtime. buildEnv() is pure policy (no spawn, no I/O); runtime.spawn
 * and runtime.bash are added by the spawn layer on top of it.
 */

import type { Buffer } from "node:buffer";
import { tmpdir as osTmpdir } from "node:os";
import {
  type ContextExport,
  type ContextExporter,
  type ContextInput,
  type ContextMode,
  createContextExporter,
} from "./env/context-export.js";
import {
  createDenylist,
  DEFAULT_HOST_PREFIX,
  DEFAULT_STEP_PREFIX,
  type Denylist,
  type DenylistAdditions,
  matchesDenylist,
} from "./env/denylist.js";
import { freezeMap } from "./env/frozen-map.js";
import {
  type EnvSnapshot,
  type InheritedBase,
  inheritedBase,
  snapshotEnv,
} from "./env/inherited.js";
import { type EnvLayer, type LayeredEnv, layerEnv, trustedEnvMap } from "./env/layers.js";
import {
  asciiUpper,
  defaultProtectedNames,
  isUpperIdentifier,
  type ProtectedNames,
  validateNameList,
} from "./env/names.js";
import { retiredFieldWarner } from "./env/retired-fields.js";
import {
  assertRecordOrMap,
  assertUntrustedKeyCount,
  capUntrusted,
  maxUntrustedKeysOption,
} from "./env/untrusted-keys.js";
import { compareNames, displayName } from "./errors.js";
import { guardHostProc } from "./host-dumpable.js";
import { knownKeys, ownOptions, ownProperties } from "./known-options.js";
import { type Logger, libraryChild } from "./log.js";
import { nativeBinding } from "./native.js";
import { type ContainOption, normalizeContain } from "./spawn/contain.js";
import type { KnownKeys, NoOptions, OutputOf, ResultOf } from "./spawn/output-type.js";
import { normalizeSandbox, type SandboxOptions } from "./spawn/sandbox.js";
import type { Subprocess } from "./spawn/subprocess.js";
import {
  type BashStepOptions,
  type BashStepPlan,
  type BashStepResult,
  planBashStep,
  runBashStep,
} from "./step/bash-step.js";
import { curatedInheritNotice } from "./step/inherit-notice.js";
import { resolveInterpreter } from "./step/interpreter.js";
import { type RuntimeSpawnOptions, runtimeSpawn } from "./step/runtime-spawn.js";
import type { StepHandle } from "./step/step-handle.js";
import { type UntrustedSkips, untrustedSkipsOption } from "./step/untrusted-skips.js";

/** A host-supplied set of variables: a record (own enumerable keys) or a Map. */
export type EnvRecord = Readonly<Record<string, string | undefined>> | ReadonlyMap<string, string>;

export interface RuntimeOptions {
  /** The host's own prefix: reserved from untrusted layers, used for tracking and correlation names. Default "EXACTSPAWN_". */
  readonly hostPrefix?: string;
  /** The step-value prefix. Default "RECIPE_VAR_". */
  readonly stepPrefix?: string;
  /** The parent environment to snapshot. Default process.env (read once, now). */
  readonly parentEnv?: EnvRecord;
  /**
   * Which parent variables steps inherit: "essentials" (the default) — the
   * essentials (PATH, HOME, USER, LOGNAME, SHELL, LANG, LANGUAGE, TZ,
   * TMPDIR/TMP/TEMP, LC_*, XDG_*), the names in `allow` and the grants, so a
   * host's own tokens never reach a step it did not name them for; or "all"
   * — the whole parent environment, where `allow` (if given) narrows it to
   * the essentials and its names, as the runtime document describes. Default
   * "essentials"; "all" under preset "recipe-runner-compat".
   */
  readonly inherit?: InheritMode;
  /** Parent names inherited besides the essentials and grants (see `inherit`). */
  readonly allow?: readonly string[];
  /** Parent names never inherited (applied after `allow`). */
  readonly block?: readonly string[];
  /** Parent names that pass both lists and that no lower layer can override. */
  readonly grants?: readonly string[];
  /** Parent name prefixes treated as grants. Default [hostPrefix + "AUTH_"]. */
  readonly grantPrefixes?: readonly string[];
  /** Persisted per-session values (trusted), below the overlay. */
  readonly sessionEnv?: EnvRecord;
  /** The host's overlay for every child (trusted). */
  readonly overlay?: EnvRecord;
  /** Host-owned values (trusted) that only grants and the correlation id rank above. */
  readonly hostEnv?: EnvRecord;
  /** Additions to the reserved-name denylist (the core cannot be removed). */
  readonly denylist?: DenylistAdditions;
  /**
   * Compatibility with the upstream recipe runner: "recipe-runner-compat"
   * exports every context key under its bare upper-cased name and gives every
   * step value its upper-case alias, guarded by the denylist alone (see
   * docs/security.md for the risk). Absent: the secure default.
   */
  readonly preset?: RuntimePreset;
  /**
   * Bare names untrusted input may set (upper-cased; each must be a shell
   * identifier that is not reserved, else TypeError): a context key or a
   * step-value alias that upper-cases to one of them is set bare. Every other
   * untrusted name is namespaced (`CTX_*`, `RECIPE_VAR_*`).
   */
  readonly bareNames?: readonly string[];
  /** How context keys become names: "namespace" (default) or "allowlist". "bare" only through the preset. */
  readonly contextMode?: ContextMode;
  /** The prefix for contextMode "namespace". Default "CTX_". */
  readonly contextNamespace?: string;
  /** The names contextMode "allowlist" exports. */
  readonly contextAllow?: readonly string[];
  /** Names budget trimming never drops. Default defaultProtectedNames(hostPrefix, stepPrefix). */
  readonly protected?: {
    readonly names?: readonly string[];
    readonly prefixes?: readonly string[];
  };
  /**
   * The sandbox of every runtime.bash and runtime.spawn call that does not
   * give its own (docs/sandbox.md). Default: none.
   */
  readonly sandbox?: SandboxOptions;
  /**
   * The containment of every runtime.bash and runtime.spawn call that does
   * not give its own (docs/containment.md). Default: "best-effort" for bash
   * steps (contained wherever this host can) unless their `cleanup` is
   * false, none for runtime.spawn.
   */
  readonly contain?: ContainOption;
  /** Windows-style case-insensitive names (ASCII case folding) for lists and layering. */
  readonly caseInsensitive?: boolean;
  /** A pino logger for this runtime's notices. Default the library logger. */
  readonly logger?: Logger;
  /** The correlation id value (e.g. a run id). Absent: no correlation variable unless given per build. */
  readonly correlationId?: string;
  /** The correlation variable's name. Default hostPrefix + "RUN_ID". */
  readonly correlationName?: string;
  /**
   * Bash steps end with the host: their process group is SIGKILLed when the
   * host process ends, however it ends (see docs/runtime.md). A step's own
   * `cleanup` overrides it. Default true.
   */
  readonly cleanup?: boolean;
  /**
   * At most this many untrusted variables (context entries and step values
   * together, step values first) reach one child; the rest are skipped,
   * reason "too_many_keys". Input with more than 4 times as many keys is
   * refused with TooManyKeysError before any per-key work. Default 4096.
   */
  readonly maxUntrustedKeys?: number;
  /**
   * What happens when untrusted input will not reach a child (an invalid or
   * reserved name, an unsupported value, no room in the budget, beyond
   * maxUntrustedKeys): "report" (default) logs one WARN naming every skipped
   * variable (never a value) and lists them in the result's `skipped`;
   * "throw" refuses to start the child with UntrustedSkipError naming them.
   */
  readonly untrustedSkips?: UntrustedSkips;
  /**
   * Leave the host process dumpable. By default createRuntime makes the host
   * non-dumpable (prctl PR_SET_DUMPABLE 0, for the rest of its life), so that
   * steps of its own uid cannot read its exec-time environment, with the
   * tokens in it, at /proc/<host>/environ, nor its memory. The cost: no core
   * dumps of the host, its own /proc/self/environ unreadable to itself
   * (unless root), no same-uid debugger attaching (docs/security.md).
   * A root host's steps are not kept out this way: give them `uid` or
   * `sandbox`. Default false.
   */
  readonly hostDumpable?: boolean;
}

/** The keys createRuntime accepts; any other key is a TypeError. One per line. */
export const RUNTIME_OPTION_KEYS = knownKeys<RuntimeOptions>({
  hostPrefix: true,
  stepPrefix: true,
  parentEnv: true,
  inherit: true,
  allow: true,
  block: true,
  grants: true,
  grantPrefixes: true,
  sessionEnv: true,
  overlay: true,
  hostEnv: true,
  denylist: true,
  bareNames: true,
  preset: true,
  contextMode: true,
  contextNamespace: true,
  contextAllow: true,
  protected: true,
  caseInsensitive: true,
  logger: true,
  correlationId: true,
  correlationName: true,
  cleanup: true,
  sandbox: true,
  contain: true,
  maxUntrustedKeys: true,
  untrustedSkips: true,
  hostDumpable: true,
});
/** The keys runtime.buildEnv accepts. */
export const BUILD_ENV_OPTION_KEYS = knownKeys<BuildEnvOptions>({
  context: true,
  stepValues: true,
  extra: true,
  correlationId: true,
});
const DENYLIST_KEYS = knownKeys<DenylistAdditions>({ names: true, prefixes: true, suffixes: true });
const PROTECTED_KEYS = knownKeys<NonNullable<RuntimeOptions["protected"]>>({
  names: true,
  prefixes: true,
});

/** An optional nested option object: absent, or a plain object with known keys only, read as its own properties. */
function nestedOption<T extends object>(
  value: T | undefined,
  known: ReadonlySet<string>,
  label: string,
): T | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError(`createRuntime: options.${label} must be an object`);
  }
  return ownOptions(value, known, `createRuntime: options.${label}`);
}

/**
 * The options as createRuntime reads them: own properties only, each read
 * once, nested objects too (ownOptions). Throws TypeError for an unknown key
 * or a wrong-typed value no other check covers.
 */
function readRuntimeOptions(options: unknown): RuntimeOptions {
  if (options === null || typeof options !== "object") {
    throw new TypeError("createRuntime: options must be an object");
  }
  const o: { -readonly [K in keyof RuntimeOptions]: RuntimeOptions[K] } = ownOptions(
    options as RuntimeOptions,
    RUNTIME_OPTION_KEYS,
    "createRuntime",
  );
  o.denylist = nestedOption(o.denylist, DENYLIST_KEYS, "denylist");
  o.protected = nestedOption(o.protected, PROTECTED_KEYS, "protected");
  if (o.caseInsensitive !== undefined && typeof o.caseInsensitive !== "boolean") {
    throw new TypeError("createRuntime: options.caseInsensitive must be a boolean");
  }
  const log = o.logger as { warn?: unknown } | undefined;
  if (log !== undefined && (log === null || typeof log.warn !== "function")) {
    throw new TypeError("createRuntime: options.logger must be a pino logger");
  }
  return o;
}

/** The options a runtime gives a call its defaults for. */
interface StepDefaults {
  readonly sandbox?: SandboxOptions;
  readonly contain?: ContainOption;
  readonly cleanup?: boolean;
}

/** The one named compatibility preset (see RuntimeOptions.preset). */
export type RuntimePreset = "recipe-runner-compat";

/** What a runtime inherits from its parent (see RuntimeOptions.inherit). */
export type InheritMode = "essentials" | "all";

function inheritOption(value: unknown, preset: RuntimePreset | undefined): InheritMode {
  if (value === undefined) return preset === "recipe-runner-compat" ? "all" : "essentials";
  if (value === "essentials" || value === "all") return value;
  throw new TypeError('createRuntime: options.inherit must be "essentials" or "all"');
}

/** The validated, frozen configuration a runtime was built from. */
export interface RuntimeConfig {
  readonly preset: RuntimePreset | undefined;
  /** The declared bare names (upper-case), or "any" under the compatibility preset. */
  readonly bareNames: readonly string[] | "any";
  /** The context namespace in "namespace" mode, else undefined. */
  readonly contextNamespace: string | undefined;
  readonly hostPrefix: string;
  readonly stepPrefix: string;
  readonly caseInsensitive: boolean;
  /** What steps inherit (see RuntimeOptions.inherit). */
  readonly inherit: InheritMode;
  readonly allow: readonly string[] | undefined;
  readonly block: readonly string[];
  readonly grants: readonly string[];
  readonly grantPrefixes: readonly string[];
  readonly sessionEnv: EnvSnapshot;
  readonly overlay: EnvSnapshot;
  readonly hostEnv: EnvSnapshot;
  readonly denylist: Denylist;
  readonly contextMode: ContextMode;
  readonly protected: ProtectedNames;
  readonly correlationName: string;
  readonly correlationId: string | undefined;
  /** Whether bash steps end with the host by default. */
  readonly cleanup: boolean;
  /** The bound on untrusted variables per child (see RuntimeOptions.maxUntrustedKeys). */
  readonly maxUntrustedKeys: number;
  /** What a skipped untrusted entry does (see RuntimeOptions.untrustedSkips). */
  readonly untrustedSkips: UntrustedSkips;
}

export interface BuildEnvOptions {
  /** Untrusted context, exported through the runtime's context policy. */
  readonly context?: ContextInput;
  /** Step values, already named (e.g. RECIPE_VAR_*) by the step-value planner. */
  readonly stepValues?: ReadonlyMap<string, string>;
  /** Trusted per-call values (a request's own env), above the overlay, below host values. */
  readonly extra?: EnvRecord;
  /** Overrides the runtime's correlation id for this build. */
  readonly correlationId?: string;
}

export interface Runtime {
  readonly config: RuntimeConfig;
  /** The parent snapshot taken at construction. */
  readonly parentEnv: EnvSnapshot;
  /** The inherited base (allow, block, per-string filter), computed once. */
  readonly inherited: InheritedBase;
  /** Exports a context with this runtime's policy. Total in `context`. */
  exportContext(context: unknown): ContextExport;
  /** Builds a child environment (pure; no spawn). */
  buildEnv(options?: BuildEnvOptions): LayeredEnv;
  /** The bash interpreter: `<hostPrefix>BASH` from the parent snapshot, else bash on its PATH. */
  interpreter(): string;
  /**
   * Runs a bash step: layered env, spill, bounded env, exact spawn, cleanup.
   * Returns a StepHandle at once: await it for the result (stdout/stderr are
   * strings, or null for a stream `stdio` does not capture), or read its
   * lines while it runs (`handle.lines("stdout" | "stderr" | "all")`).
   */
  bash(command: string, options?: undefined): StepHandle<BashStepResult<string>>;
  bash<const O extends BashStepOptions>(
    command: string,
    options: KnownKeys<O, BashStepOptions> | undefined,
  ): StepHandle<BashStepResult<OutputOf<O, 1>, OutputOf<O, 2>>>;
  /** Plans a bash step without writing files or spawning (what `exactspawn explain` shows). */
  planBash(command: string, options?: BashStepOptions): BashStepPlan;
  /** Spawns an agent-style child: the layered env without step values, trimmed to fit. Typed as spawn's. */
  spawn(
    file: string,
    args?: ReadonlyArray<string | Buffer>,
    options?: undefined,
  ): Subprocess<ResultOf<NoOptions>>;
  spawn<const O extends RuntimeSpawnOptions>(
    file: string,
    args: ReadonlyArray<string | Buffer> | undefined,
    options: KnownKeys<O, RuntimeSpawnOptions> | undefined,
  ): Subprocess<ResultOf<O>>;
}

function prefixOption(value: unknown, label: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !isUpperIdentifier(value)) {
    throw new TypeError(`${label} must be an upper-case shell identifier`);
  }
  return value;
}

function presetOption(value: unknown): RuntimePreset | undefined {
  if (value === undefined || value === "recipe-runner-compat") return value;
  throw new TypeError('preset must be "recipe-runner-compat"');
}

function contextModeOption(value: unknown, preset: RuntimePreset | undefined): ContextMode {
  if (preset === "recipe-runner-compat") {
    if (value !== undefined && value !== "bare") {
      throw new TypeError(
        'preset "recipe-runner-compat" exports bare context names: omit contextMode',
      );
    }
    return "bare";
  }
  if (value === undefined) return "namespace";
  if (value === "bare") {
    throw new TypeError(
      'contextMode "bare" is available only through preset: "recipe-runner-compat"; ' +
        "declare the bare names you need with bareNames instead",
    );
  }
  if (value !== "namespace" && value !== "allowlist") {
    throw new TypeError('contextMode must be "namespace" or "allowlist"');
  }
  return value;
}

/** Upper-cased declared bare names; TypeError for a non-identifier or a reserved name (named, it is the host's own). */
function validateBareNames(value: unknown, denylist: Denylist): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value)) throw new TypeError("bareNames must be an array of names");
  return Object.freeze(
    value.map((item: unknown, index) => {
      const upper = typeof item === "string" ? asciiUpper(item) : "";
      if (!isUpperIdentifier(upper)) {
        throw new TypeError(`bareNames entry ${index} is not a shell identifier`);
      }
      if (matchesDenylist(upper, denylist)) {
        throw new TypeError(
          `bareNames entry ${index} names a reserved variable: ${displayName(upper)}`,
        );
      }
      return upper;
    }),
  );
}

function correlationValue(value: unknown, label: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.includes("\0") || !value.isWellFormed()) {
    throw new TypeError(`${label} must be a string without NUL`);
  }
  return value;
}

/**
 * Creates a runtime. Validates and snapshots every option now; throws
 * TypeError for a malformed option (lists must be arrays of non-empty names
 * without '=' or NUL) and InvalidEnvError for an unrepresentable variable in
 * parentEnv, sessionEnv, overlay or hostEnv. No message echoes a value.
 * Logs (WARN, name and size) each parent variable too large to pass.
 */
export function createRuntime(given: RuntimeOptions = {}): Runtime {
  const options = readRuntimeOptions(given);
  const hostPrefix = prefixOption(options.hostPrefix, "hostPrefix", DEFAULT_HOST_PREFIX);
  const stepPrefix = prefixOption(options.stepPrefix, "stepPrefix", DEFAULT_STEP_PREFIX);
  const caseInsensitive = options.caseInsensitive === true;
  if (options.cleanup !== undefined && typeof options.cleanup !== "boolean") {
    throw new TypeError("createRuntime: options.cleanup must be a boolean");
  }
  const stepCleanup = options.cleanup ?? true;
  if (options.hostDumpable !== undefined && typeof options.hostDumpable !== "boolean") {
    throw new TypeError("createRuntime: options.hostDumpable must be a boolean");
  }
  const maxUntrustedKeys = maxUntrustedKeysOption(options.maxUntrustedKeys, "createRuntime");
  const untrustedSkips = untrustedSkipsOption(options.untrustedSkips, "createRuntime");
  const list = (
    value: readonly string[] | undefined,
    label: string,
  ): readonly string[] | undefined =>
    value === undefined ? undefined : validateNameList(value, label);
  const allow = list(options.allow, "allow");
  const block = list(options.block, "block") ?? Object.freeze([]);
  const grants = list(options.grants, "grants") ?? Object.freeze([]);
  const grantPrefixes =
    list(options.grantPrefixes, "grantPrefixes") ?? Object.freeze([`${hostPrefix}AUTH_`]);
  const denylist = createDenylist({ ...(options.denylist ?? {}), hostPrefix, stepPrefix });
  const preset = presetOption(options.preset);
  const inherit = inheritOption(options.inherit, preset);
  const contextMode = contextModeOption(options.contextMode, preset);
  const declared = validateBareNames(options.bareNames, denylist);
  // The host's logger, as the library writes to it: its `lib: "exactspawn"` child.
  const log = options.logger === undefined ? undefined : libraryChild(options.logger);
  const exporterOptions = {
    mode: contextMode,
    ...(options.contextNamespace === undefined ? {} : { namespace: options.contextNamespace }),
    ...(options.contextAllow === undefined ? {} : { allow: options.contextAllow }),
    bare: declared,
    denylist,
  } as const;
  // runtime.exportContext logs each skip (the caller asked for the export);
  // a step's build does not: the step reports its skips once per reason.
  const exporter: ContextExporter = createContextExporter({
    ...exporterOptions,
    ...(log === undefined ? {} : { logger: log }),
  });
  const stepExporter: ContextExporter = createContextExporter({
    ...exporterOptions,
    logger: false,
  });
  const contextNamespace =
    contextMode === "namespace" ? asciiUpper(options.contextNamespace ?? "CTX_") : undefined;
  // Allow-list names are host-declared bare names too (for context keys and aliases alike).
  const bareNames: ReadonlySet<string> | "any" =
    preset === "recipe-runner-compat"
      ? "any"
      : new Set([
          ...declared,
          ...(contextMode === "allowlist" ? (options.contextAllow ?? []).map(asciiUpper) : []),
        ]);
  const defaults = defaultProtectedNames(hostPrefix, stepPrefix);
  const protectedNames: ProtectedNames = Object.freeze({
    names: list(options.protected?.names, "protected.names") ?? Object.freeze([...defaults.names]),
    prefixes:
      list(options.protected?.prefixes, "protected.prefixes") ??
      Object.freeze([...defaults.prefixes]),
  });
  const correlationName = prefixOption(
    options.correlationName,
    "correlationName",
    `${hostPrefix}RUN_ID`,
  );
  const correlationId = correlationValue(options.correlationId, "correlationId");

  const parentEnv = snapshotEnv(options.parentEnv ?? process.env, "parentEnv");
  const sessionEnv = freezeMap(trustedEnvMap(options.sessionEnv, "sessionEnv"));
  const overlay = freezeMap(trustedEnvMap(options.overlay, "overlay"));
  const hostEnv = freezeMap(trustedEnvMap(options.hostEnv, "hostEnv"));
  const inherited = inheritedBase(parentEnv, {
    // The curated default is an allow list of the essentials and the host's names.
    allow: allow ?? (inherit === "all" ? undefined : Object.freeze([])),
    block,
    grants,
    grantPrefixes,
    caseInsensitive,
    ...(log === undefined ? {} : { logger: log }),
  });

  // The grant layer: granted parent variables that survived the per-string filter.
  const fold = (name: string): string => (caseInsensitive ? asciiUpper(name) : name);
  const grantKeys = new Set(grants.map(fold));
  const grantPrefixKeys = grantPrefixes.map(fold);
  const grantLayer = new Map<string, string>();
  for (const [name, value] of inherited.env) {
    const key = fold(name);
    if (grantKeys.has(key) || grantPrefixKeys.some((prefix) => key.startsWith(prefix))) {
      grantLayer.set(name, value);
    }
  }
  const grantEnv = freezeMap(new Map([...grantLayer].sort(([a], [b]) => compareNames(a, b))));

  const config: RuntimeConfig = Object.freeze({
    preset,
    bareNames: bareNames === "any" ? "any" : Object.freeze([...bareNames].sort()),
    contextNamespace,
    hostPrefix,
    stepPrefix,
    caseInsensitive,
    inherit,
    allow,
    block,
    grants,
    grantPrefixes,
    sessionEnv,
    overlay,
    hostEnv,
    denylist,
    contextMode,
    protected: protectedNames,
    correlationName,
    correlationId,
    cleanup: stepCleanup,
    maxUntrustedKeys,
    untrustedSkips,
  });

  // The env of a build with no per-call layer depends on the runtime alone: it
  // is built once, frozen, and handed out again (so what spawn derives from
  // it, the validated and packed envp, is kept too).
  let fixedLayered: LayeredEnv | undefined;
  const buildEnv = (given: BuildEnvOptions = {}): LayeredEnv => {
    if (given === null || typeof given !== "object") {
      throw new TypeError("buildEnv: options must be an object");
    }
    // Own properties only: an inherited `context` or `extra` is no layer.
    const build = ownOptions(given, BUILD_ENV_OPTION_KEYS, "buildEnv");
    const stepValues = build.stepValues;
    if (stepValues !== undefined && !(stepValues instanceof Map)) {
      throw new TypeError("stepValues must be a Map of name to value");
    }
    const id = correlationValue(build.correlationId, "correlationId") ?? correlationId;
    assertRecordOrMap(build.context, "buildEnv: options.context");
    assertUntrustedKeyCount([build.context, stepValues], maxUntrustedKeys, "buildEnv");
    const fixed =
      build.context === undefined &&
      (stepValues === undefined || stepValues.size === 0) &&
      build.extra === undefined &&
      build.correlationId === undefined;
    if (fixed && fixedLayered !== undefined) return fixedLayered;
    const capped = capUntrusted(
      stepValues,
      build.context === undefined ? undefined : stepExporter(build.context),
      maxUntrustedKeys,
      bareNames,
    );
    const layered = layerEnv({
      inherited: inherited.env,
      inheritedDrops: inherited.dropped,
      capped: capped.skipped,
      context: capped.context,
      stepValues: capped.stepValues,
      session: sessionEnv,
      overlay,
      extra: build.extra === undefined ? undefined : trustedEnvMap(build.extra, "extra"),
      host: hostEnv,
      grants: grantEnv,
      correlation: id === undefined ? undefined : [correlationName, id],
      denylist,
      stepPrefix,
      caseInsensitive,
      bareNames,
      contextNamespace,
    });
    if (!fixed) return layered;
    freezeMap(layered.env as Map<string, string>);
    freezeMap(layered.origin as Map<string, EnvLayer>);
    fixedLayered = layered;
    return layered;
  };

  let interpreter: string | undefined;
  let tmpdir: string | undefined;
  const host = {
    stepPrefix,
    aliases: bareNames === "any" ? true : bareNames,
    interpreter: () => {
      interpreter ??= resolveInterpreter({ parentEnv, hostPrefix });
      return interpreter;
    },
    buildEnv,
    protected: protectedNames,
    tmpdir: () => {
      // Read once, like the rest of the parent environment.
      tmpdir ??= parentEnv.get("TMPDIR") || osTmpdir();
      return tmpdir;
    },
    parentPath: () => parentEnv.get("PATH"),
    logger: log,
    correlationId,
    maxUntrustedKeys,
    untrustedSkips,
    retiredFields: retiredFieldWarner(log === undefined ? {} : { log }),
    firstUse: curatedInheritNotice(inherited.dropped, options.inherit !== undefined, log),
    cleanup: stepCleanup,
  };

  const sandbox = options.sandbox;
  if (sandbox !== undefined) normalizeSandbox("createRuntime", sandbox);
  const contain = options.contain;
  if (contain !== undefined) normalizeContain("createRuntime", contain);
  // A call's options as the step reads them (own properties, each read once),
  // with the runtime's sandbox and containment where the call gives none:
  // its own `contain` wins, else the runtime's, else the kind's default.
  // Anything but an object is passed on for the step to refuse.
  const withDefaults = <T extends StepDefaults>(
    given: T | undefined,
    kindDefault: (own: T) => ContainOption | undefined,
  ): T | undefined => {
    if (given !== undefined && (given === null || typeof given !== "object")) return given;
    const own = ownProperties(given ?? ({} as T)) as { -readonly [K in keyof T]: T[K] };
    if (own.sandbox === undefined && sandbox !== undefined) own.sandbox = sandbox;
    if (own.contain === undefined) {
      const chosen = contain ?? kindDefault(own);
      if (chosen !== undefined) own.contain = chosen;
    }
    return own;
  };

  // Every option is valid: from here on the host keeps its /proc entries from
  // its steps (src/host-dumpable.ts), unless this runtime opted out. Its one
  // warning is the process's, like the fallback's: the library logger.
  if (options.hostDumpable !== true) guardHostProc(nativeBinding());

  return Object.freeze({
    config,
    parentEnv,
    inherited,
    exportContext: (context: unknown) => exporter(context),
    buildEnv,
    interpreter: host.interpreter,
    bash: ((command: string, bashOptions?: BashStepOptions) =>
      runBashStep(
        host,
        command,
        // A step asked to outlive its host (cleanup: false) is not contained by default either.
        withDefaults(bashOptions, (own) =>
          (own.cleanup ?? stepCleanup) ? "best-effort" : undefined,
        ),
      )) as Runtime["bash"],
    planBash: (command: string, bashOptions?: BashStepOptions) =>
      planBashStep(host, command, bashOptions),
    spawn: ((
      file: string,
      args: ReadonlyArray<string | Buffer> = [],
      spawnOptions?: RuntimeSpawnOptions,
    ) =>
      runtimeSpawn(
        host,
        file,
        args,
        withDefaults(spawnOptions, () => undefined),
      )) as Runtime["spawn"],
  });
}
