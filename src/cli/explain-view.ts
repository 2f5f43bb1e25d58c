/**
 * What `explain` shows of a planned bash step, as data (the
 * `exactspawn.explain/v1` JSON schema) and as a table. Built from the plan's
 * names, fates, origins and sizes only: no value can reach either form.
 */
import { Buffer } from "node:buffer";
import { displayName } from "../errors.js";
import { MAX_ARG_STRLEN, PER_VALUE_ENV_CAP } from "../limits.js";
import type { BashStepPlan, VariableFate } from "../step/bash-step.js";
import { colorEnabled, formatBytes, paint } from "./format.js";

export const EXPLAIN_SCHEMA = "exactspawn.explain/v1";

export const FATES: readonly VariableFate[] = Object.freeze([
  "inline",
  "spilled",
  "trimmed",
  "skipped",
  "dropped",
]);

/**
 * Which limit a variable hit: the per-value cap (a step value or context
 * entry over PER_VALUE_ENV_CAP), the kernel's per-string limit
 * (MAX_ARG_STRLEN: an inherited variable no exec could carry), or the
 * budget (everything together over the exec limit).
 */
export type LimitHit = "per-value cap" | "per-string limit" | "budget";

export interface ExplainVariable {
  readonly name: string;
  readonly fate: VariableFate;
  readonly origin: string;
  readonly bytes: number | null;
  readonly reason: string | null;
  /** The limit behind the fate, when a limit was the reason; else null. */
  readonly limit: LimitHit | null;
}

export interface ExplainReport {
  readonly schema: typeof EXPLAIN_SCHEMA;
  readonly interpreter: string;
  readonly scriptMode: "inline" | "file";
  readonly commandBytes: number;
  readonly limits: {
    readonly execLimit: number;
    readonly maxArgStrlen: number;
    readonly source: string;
  };
  readonly footprint: number;
  readonly headroom: number;
  readonly used: number;
  readonly variables: readonly ExplainVariable[];
  readonly totals: Readonly<Record<VariableFate, { count: number; bytes: number }>> & {
    readonly variables: number;
  };
  /** Advice in one line each (e.g. most of the environment came from npm). */
  readonly hints: readonly string[];
}

interface PlannedVariable {
  readonly name: string;
  readonly fate: VariableFate;
  readonly bytes: number | undefined;
  readonly reason: string | undefined;
}

/** The limit a planned variable hit, from its fate, reason and size. */
export function limitHit(v: PlannedVariable): LimitHit | null {
  switch (v.fate) {
    case "spilled":
      return (v.bytes ?? 0) > PER_VALUE_ENV_CAP ? "per-value cap" : "budget";
    case "trimmed":
      return "budget";
    case "dropped":
      if (v.reason === "too_large") return "per-string limit";
      return v.reason === "over_cap_unspillable_name" ? "per-value cap" : null;
    case "skipped":
      if (v.reason === "value_too_large") return "per-value cap";
      return v.reason === "aggregate_env_budget" ? "budget" : null;
    default:
      return null;
  }
}

const LIMIT_DETAIL: Readonly<Record<LimitHit, string>> = {
  "per-value cap": `over the per-value cap of ${PER_VALUE_ENV_CAP.toLocaleString("en-US")} bytes`,
  "per-string limit": `over the kernel's per-string limit (MAX_ARG_STRLEN, ${MAX_ARG_STRLEN.toLocaleString("en-US")} bytes)`,
  budget: "to fit the exec limit (budget)",
};

function reasonFor(v: PlannedVariable, limit: LimitHit | null): string | null {
  if (v.fate === "spilled" && limit !== null) return LIMIT_DETAIL[limit];
  return v.reason ?? null;
}

/** Variables npm or npx put into a script's environment (the package runner's own). */
const PACKAGE_RUNNER = /^npm_/i;

/**
 * A hint when the package runner's `npm_*` variables make up much of the
 * inherited environment (40% of the variables, or half of the bytes): run
 * through `npx` or `npm run`, the plan describes npm's environment more than
 * the user's. (`npx` alone adds about 30 such variables to a shell's 30–60.)
 */
function packageRunnerHint(variables: readonly ExplainVariable[]): string | undefined {
  const inherited = variables.filter((v) => v.origin === "inherited" && v.bytes !== null);
  const runner = inherited.filter((v) => PACKAGE_RUNNER.test(v.name));
  const bytes = (list: readonly ExplainVariable[]): number =>
    list.reduce((sum, v) => sum + (v.bytes ?? 0), 0);
  const byCount = runner.length * 5 >= inherited.length * 2;
  const byBytes = bytes(runner) * 2 > bytes(inherited);
  if (runner.length === 0 || !(byCount || byBytes)) return undefined;
  return (
    `${runner.length} of ${inherited.length} inherited variables (${formatBytes(bytes(runner))} of ` +
    `${formatBytes(bytes(inherited))}) come from the package runner (npm_*): choose what is ` +
    "inherited with --allow NAME or --parent-env FILE, or run exactspawn directly"
  );
}

/** The report for a plan. Pure. */
export function explainReport(
  plan: BashStepPlan,
  command: string,
  limitsSource: string,
): ExplainReport {
  const variables = plan.variables.map((v): ExplainVariable => {
    const limit = limitHit(v);
    return {
      name: v.name,
      fate: v.fate,
      origin: v.origin,
      bytes: v.bytes ?? null,
      reason: reasonFor(v, limit),
      limit,
    };
  });
  const totals = Object.fromEntries(FATES.map((fate) => [fate, { count: 0, bytes: 0 }])) as Record<
    VariableFate,
    { count: number; bytes: number }
  >;
  for (const v of variables) {
    totals[v.fate].count++;
    totals[v.fate].bytes += v.bytes ?? 0;
  }
  const { execLimit, maxArgStrlen } = plan.limits;
  return {
    schema: EXPLAIN_SCHEMA,
    interpreter: plan.interpreter,
    scriptMode: plan.scriptMode,
    commandBytes: Buffer.byteLength(command, "utf8"),
    limits: { execLimit, maxArgStrlen, source: limitsSource },
    footprint: plan.footprint,
    headroom: execLimit - plan.footprint,
    used: Math.round((plan.footprint / execLimit) * 10_000) / 10_000,
    variables,
    totals: { variables: variables.length, ...totals },
    hints: [packageRunnerHint(variables)].filter((hint) => hint !== undefined),
  };
}

const FATE_STYLE = {
  inline: "green",
  spilled: "yellow",
  trimmed: "red",
  skipped: "magenta",
  dropped: "red",
} as const;

/** `[#######.......................]` for a fraction in [0, 1]. */
export function budgetBar(fraction: number, width = 32): string {
  const filled = Math.min(width, Math.max(0, Math.round(fraction * width)));
  const shown = fraction > 0 && filled === 0 ? 1 : filled;
  return `[${"#".repeat(shown)}${".".repeat(width - shown)}]`;
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

/**
 * The human table: one row per listed variable, the budget bar and the
 * totals (of every variable). `shown`: how many rows are listed when a
 * filter or the summary left some out (then a `listed` line says so).
 */
export function explainTable(
  report: ExplainReport,
  stream: NodeJS.WriteStream,
  shown?: { readonly listed: number; readonly summaryOnly: boolean },
): string {
  const color = colorEnabled(stream);
  const header = ["NAME", "FATE", "ORIGIN", "BYTES", "REASON"];
  const rows = report.variables.map((v) => [
    displayName(v.name),
    v.fate,
    v.origin,
    v.bytes === null ? "-" : v.bytes.toLocaleString("en-US"),
    v.limit === null || v.fate === "spilled" || v.fate === "trimmed"
      ? (v.reason ?? "")
      : `${v.reason} (${v.limit})`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[], fate?: VariableFate): string =>
    cells
      .map((cell, i) => {
        const padded = i === 3 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!);
        return i === 1 && fate !== undefined ? paint(FATE_STYLE[fate], padded, color) : padded;
      })
      .join("  ")
      .trimEnd();
  const out: string[] = [];
  if (shown?.summaryOnly !== true) {
    out.push(paint("bold", line(header), color));
    report.variables.forEach((v, index) => {
      out.push(line(rows[index]!, v.fate));
    });
    out.push("");
  }
  const { execLimit } = report.limits;
  out.push(
    `interpreter  ${report.interpreter} (script ${report.scriptMode === "inline" ? "inline, bash -c" : "through a descriptor"}, ${report.commandBytes.toLocaleString("en-US")} B command)`,
  );
  out.push(
    `budget       ${budgetBar(report.used)} ${percent(report.used)}: footprint ${formatBytes(report.footprint)} of exec limit ${formatBytes(execLimit)} (${report.limits.source})`,
  );
  const parts = FATES.map((fate) => {
    const { count, bytes } = report.totals[fate];
    return fate === "skipped" ? `${count} ${fate}` : `${count} ${fate} (${formatBytes(bytes)})`;
  });
  out.push(`totals       ${report.totals.variables} variables: ${parts.join(", ")}`);
  if (shown?.summaryOnly === true) {
    out.push(
      `listed       none of ${report.totals.variables.toLocaleString("en-US")} variables: filter with --fate, --origin or --name, or list all with --all`,
    );
  } else if (shown !== undefined && shown.listed < report.totals.variables) {
    out.push(
      `listed       ${shown.listed.toLocaleString("en-US")} of ${report.totals.variables.toLocaleString("en-US")} variables`,
    );
  }
  for (const hint of report.hints) out.push(`hint         ${hint}`);
  return out.join("\n");
}
