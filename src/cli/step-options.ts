/**
 * The options `explain` and `run` share: how the command line becomes a
 * runtime (parent environment, allow/block lists) and a bash step (context,
 * step values, limits). Nothing here echoes a value: errors name an option,
 * a key or a file.
 */
import type { ParseArgsConfig } from "node:util";
import { displayName } from "../errors.js";
import { type Limits, MAX_ARG_STRLEN, probeLimits } from "../limits.js";
import type { Logger } from "../log.js";
import type { InheritMode, RuntimeOptions } from "../runtime.js";
import { readEnvFile } from "./env-file.js";
import { applyLogLevel } from "./log-level.js";
import { UsageError } from "./usage-error.js";
import { readContextFile, StdinSource, sourcedValue } from "./value-source.js";

export const STEP_OPTIONS = {
  context: { type: "string", multiple: true },
  "context-file": { type: "string", multiple: true },
  var: { type: "string", multiple: true },
  "env-file": { type: "string" },
  "parent-env": { type: "string" },
  inherit: { type: "string" },
  allow: { type: "string", multiple: true },
  block: { type: "string", multiple: true },
  "bare-name": { type: "string", multiple: true },
  preset: { type: "string" },
  "exec-limit": { type: "string" },
  "log-level": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

export const STEP_OPTIONS_HELP = `  --context KEY=VALUE   a context entry, set as CTX_KEY (untrusted: bare KEY only if declared with
                        --bare-name); repeatable
  --context-file FILE   context entries from FILE, a JSON object of string values; repeatable
  --var NAME=VALUE      a step value, set as RECIPE_VAR_NAME (untrusted: bare NAME only if declared
                        with --bare-name); repeatable
  --var NAME=@FILE      (also --context) the value read from FILE (UTF-8): keeps secrets out of
                        the command line, which every local user can read with ps
  --var NAME=@-         (also --context) the value read from stdin; at most one @- in all
  --var NAME=@@TEXT     (also --context) the literal value "@TEXT"
  --env-file FILE       use FILE (NAME=value lines) as the parent environment instead of this
                        process's environment
  --parent-env FILE     the same as --env-file, under a name node never intercepts (node
                        itself exits 9 when a script argument --env-file names a missing file)
  --inherit essentials|all
                        what the step inherits from the parent environment: the essentials
                        (PATH, HOME, USER, LANG, LC_*, XDG_*, ...) and the --allow names (the
                        default), or all of it (then --allow narrows it, --block removes names)
  --allow NAME          inherit this name besides the essentials; repeatable
  --block NAME          never inherit NAME; repeatable
  --bare-name NAME      let a context key or step value upper-casing to NAME set NAME itself
                        (declare only names your steps read; reserved names are refused); repeatable
  --preset recipe-runner-compat
                        every context key and step value as its upper-cased bare name, guarded
                        only by the denylist (the amplihack recipe runner's behaviour; see
                        docs/security.md for the risk)
  --exec-limit BYTES    plan against this exec limit (e.g. 262144, 256K, 2M) instead of the probed one
  --log-level LEVEL     pino level for notices on stderr (default: EXACTSPAWN_LOG_LEVEL, else error)`;

/** What the parsed shared options ask for. */
export interface StepRequest {
  readonly runtime: RuntimeOptions;
  readonly context: Map<string, string> | undefined;
  readonly values: Map<string, string>;
  readonly limits: Pick<Limits, "execLimit" | "maxArgStrlen">;
  /** "option" when --exec-limit set it, else where probeLimits got it. */
  readonly limitsSource: "option" | Limits["source"];
  readonly command: string;
  readonly log: Logger;
  /** Whether a value was read from stdin (`@-`): then stdin is used up. */
  readonly stdinUsed: boolean;
}

type SharedValues = {
  context?: string[];
  "context-file"?: string[];
  var?: string[];
  "env-file"?: string;
  "parent-env"?: string;
  inherit?: string;
  allow?: string[];
  block?: string[];
  "bare-name"?: string[];
  preset?: string;
  "exec-limit"?: string;
  "log-level"?: string;
};

function splitPair(text: string, option: string, what: string): [string, string] {
  const at = text.indexOf("=");
  if (at <= 0) throw new UsageError(`${option} expects ${what}=VALUE`);
  return [text.slice(0, at), text.slice(at + 1)];
}

function inheritMode(text: string): InheritMode {
  if (text === "essentials" || text === "all") return text;
  throw new UsageError('--inherit must be "essentials" or "all"');
}

/** "262144", "256K", "2M" (binary units). */
export function parseByteSize(text: string, option: string): number {
  const match = /^(\d+)([KkMm]?)$/.exec(text);
  if (match === null)
    throw new UsageError(`${option} expects a byte count such as 262144, 256K, 2M`);
  const unit = match[2]?.toUpperCase() === "M" ? 1024 * 1024 : match[2] === "" ? 1 : 1024;
  const bytes = Number(match[1]) * unit;
  if (!Number.isSafeInteger(bytes) || bytes < 1) throw new UsageError(`${option} is out of range`);
  return bytes;
}

function limitsFor(text: string | undefined): Pick<StepRequest, "limits" | "limitsSource"> {
  const probed = probeLimits();
  if (text === undefined) {
    return {
      limits: { execLimit: probed.execLimit, maxArgStrlen: probed.maxArgStrlen },
      limitsSource: probed.source,
    };
  }
  const execLimit = parseByteSize(text, "--exec-limit");
  return {
    limits: { execLimit, maxArgStrlen: Math.min(MAX_ARG_STRLEN, execLimit) },
    limitsSource: "option",
  };
}

/**
 * Turns the shared options and the COMMAND words into a step request.
 * Context comes from the --context-file files in order, then the --context
 * entries (a later entry for the same key wins). Throws UsageError.
 */
export function stepRequest(
  values: SharedValues,
  positionals: readonly string[],
  defaultCommand: string | undefined,
  stdin: StdinSource = new StdinSource(),
): StepRequest {
  const log = applyLogLevel(values["log-level"]);
  // Maps, not records: a key such as "__proto__" is just a key.
  let context: Map<string, string> | undefined;
  for (const file of values["context-file"] ?? []) {
    context ??= new Map();
    for (const [key, value] of readContextFile(file)) context.set(key, value);
  }
  for (const entry of values.context ?? []) {
    const [key, raw] = splitPair(entry, "--context", "KEY");
    context ??= new Map();
    context.set(key, sourcedValue(raw, `--context ${displayName(key)}`, stdin));
  }
  const stepValues = new Map<string, string>();
  for (const entry of values.var ?? []) {
    const [name, raw] = splitPair(entry, "--var", "NAME");
    stepValues.set(name, sourcedValue(raw, `--var ${displayName(name)}`, stdin));
  }
  if (values["env-file"] !== undefined && values["parent-env"] !== undefined) {
    throw new UsageError("give --env-file or --parent-env, not both");
  }
  const envFileOption = values["env-file"] !== undefined ? "--env-file" : "--parent-env";
  const envFile = values["env-file"] ?? values["parent-env"];
  const runtime: RuntimeOptions = {
    logger: log,
    ...(envFile === undefined ? {} : { parentEnv: readEnvFile(envFile, envFileOption) }),
    ...(values.inherit === undefined ? {} : { inherit: inheritMode(values.inherit) }),
    ...(values.allow === undefined ? {} : { allow: values.allow }),
    ...(values.block === undefined ? {} : { block: values.block }),
    ...(values["bare-name"] === undefined ? {} : { bareNames: values["bare-name"] }),
    ...(values.preset === undefined ? {} : { preset: values.preset as RuntimeOptions["preset"] }),
  };
  const command = positionals.length > 0 ? positionals.join(" ") : defaultCommand;
  if (command === undefined) throw new UsageError("a COMMAND is required after --");
  return {
    runtime,
    context,
    values: stepValues,
    ...limitsFor(values["exec-limit"]),
    command,
    log,
    stdinUsed: stdin.used,
  };
}
