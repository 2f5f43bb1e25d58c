/**
 * What `explain` shows of a planned bash step, as data (the
 * `exactspawn.explain/v1` JSON schema) and as a table. Built from the plan's
 * names, fates, origins and sizes only: no value can reach either form.
 */
import { Buffer } from "node:buffer";
import { displayName } from "../errors.js";
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

export interface ExplainVariable {
  readonly name: string;
  readonly fate: VariableFate;
  readonly origin: string;
  readonly bytes: number | null;
  readonly reason: string | null;
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
}

/** The report for a plan. Pure. */
export function explainReport(
  plan: BashStepPlan,
  command: string,
  limitsSource: string,
): ExplainReport {
  const variables = plan.variables.map((v) => ({
    name: v.name,
    fate: v.fate,
    origin: v.origin,
    bytes: v.bytes ?? null,
    reason: v.reason ?? null,
  }));
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

/** The human table: one row per variable, the budget bar and the totals. */
export function explainTable(report: ExplainReport, stream: NodeJS.WriteStream): string {
  const color = colorEnabled(stream);
  const header = ["NAME", "FATE", "ORIGIN", "BYTES", "REASON"];
  const rows = report.variables.map((v) => [
    displayName(v.name),
    v.fate,
    v.origin,
    v.bytes === null ? "-" : v.bytes.toLocaleString("en-US"),
    v.reason ?? "",
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
  const out = [paint("bold", line(header), color)];
  report.variables.forEach((v, index) => {
    out.push(line(rows[index]!, v.fate));
  });
  const { execLimit } = report.limits;
  out.push("");
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
  return out.join("\n");
}
