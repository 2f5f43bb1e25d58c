/** `exactspawn limits [--json]`: what the kernel allows here, and where the numbers came from. */
import { type Limits, type ProbedSize, probeLimits } from "../limits.js";
import { nativeStatus } from "../native.js";
import { parseCommandLine } from "./command-line.js";
import { colorEnabled, formatBytes, paint, table } from "./format.js";
import { UsageError } from "./usage-error.js";

export const LIMITS_HELP = `Usage: exactspawn limits [--json]

Prints the probed kernel limits and the exec-size budget derived from them:
  exec limit      the bytes argv + envp + filename + 8 per pointer may take
  per-string      the largest single argv or env string, NUL included
  env budget      what an environment may take when argv is not yet known
  source          "native" (probed through the addon) or "fallback" (256 KiB floor)

Options:
  --json   one JSON object (schema: exactspawn.limits/v1) instead of a table
  -h, --help`;

function probed(value: ProbedSize): string {
  if (value === null) return "unavailable";
  if (value === "unlimited") return "unlimited";
  return formatBytes(value);
}

/** The stable machine-readable shape printed by --json. */
export function limitsJson(limits: Limits): Record<string, unknown> {
  return {
    schema: "exactspawn.limits/v1",
    source: limits.source,
    argMax: limits.argMax,
    stackSoft: limits.stackSoft,
    stackHard: limits.stackHard,
    pageSize: limits.pageSize,
    execLimit: limits.execLimit,
    maxArgStrlen: limits.maxArgStrlen,
    envBudget: limits.envBudget,
    errors: limits.errors,
    fallbackReason: limits.fallbackReason ?? null,
    native: nativeStatus().loaded,
  };
}

export function runLimits(argv: string[]): number {
  const { values, positionals } = parseCommandLine("limits", argv, {
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (positionals.length > 0) throw new UsageError("limits takes no arguments");
  if (values.help) {
    process.stdout.write(`${LIMITS_HELP}\n`);
    return 0;
  }
  const limits = probeLimits();
  if (values.json) {
    process.stdout.write(`${JSON.stringify(limitsJson(limits), null, 2)}\n`);
    return 0;
  }
  const color = colorEnabled(process.stdout);
  const source =
    limits.source === "native"
      ? paint("green", "native (probed through the addon)", color)
      : paint("yellow", `fallback: ${limits.fallbackReason ?? "unknown reason"}`, color);
  const rows: Array<[string, string]> = [
    ["sysconf(ARG_MAX)", probed(limits.argMax)],
    ["RLIMIT_STACK soft", probed(limits.stackSoft)],
    ["RLIMIT_STACK hard", probed(limits.stackHard)],
    ["page size", probed(limits.pageSize)],
    ["exec limit", formatBytes(limits.execLimit)],
    ["per-string limit", formatBytes(limits.maxArgStrlen)],
    ["env budget", formatBytes(limits.envBudget)],
    ["source", source],
  ];
  for (const [field, error] of Object.entries(limits.errors)) rows.push([`error ${field}`, error]);
  process.stdout.write(`${table(rows)}\n`);
  return 0;
}
