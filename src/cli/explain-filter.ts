/**
 * `explain --fate F --origin O --name GLOB`: which variables the table (and
 * the JSON's `variables`) lists, and when a table is too big to print in
 * full without being asked (--all). Totals always cover every variable.
 */
import type { ParseArgsConfig } from "node:util";
import type { VariableFate } from "../step/bash-plan.js";
import { type ExplainVariable, FATES } from "./explain-view.js";
import { UsageError } from "./usage-error.js";

/** A table longer than this prints its summary only, unless filtered or --all. */
export const SUMMARY_ROWS = 200;

export const EXPLAIN_FILTER_OPTIONS = {
  fate: { type: "string", multiple: true },
  origin: { type: "string", multiple: true },
  name: { type: "string", multiple: true },
  all: { type: "boolean" },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

export const EXPLAIN_FILTER_HELP = `  --fate FATE           list only variables of this fate (inline, spilled, trimmed, skipped,
                        dropped); repeatable
  --origin LAYER        list only variables from this layer (inherited, context, step, session,
                        overlay, extra, host, grant, correlation); repeatable
  --name GLOB           list only names matching GLOB (* any run, ? one character); repeatable
  --all                 list every variable even when there are more than ${SUMMARY_ROWS} (by default a
                        bigger table prints its summary only)`;

type FilterValues = { fate?: string[]; origin?: string[]; name?: string[]; all?: boolean };

export interface ExplainFilter {
  /** Whether any of --fate, --origin, --name was given. */
  readonly filtered: boolean;
  readonly all: boolean;
  matches(variable: ExplainVariable): boolean;
}

function globPattern(glob: string): RegExp {
  const body = [...glob]
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[\\^$.|+()[\]{}]/g, "\\$&")))
    .join("");
  return new RegExp(`^${body}$`, "s");
}

/** The filter the values ask for; UsageError for an unknown fate. */
export function explainFilter(values: FilterValues): ExplainFilter {
  for (const fate of values.fate ?? []) {
    if (!(FATES as readonly string[]).includes(fate)) {
      throw new UsageError(`--fate must be one of ${FATES.join(", ")}`);
    }
  }
  const fates = values.fate === undefined ? undefined : new Set<string>(values.fate);
  const origins = values.origin === undefined ? undefined : new Set(values.origin);
  const names = values.name?.map(globPattern);
  return {
    filtered: fates !== undefined || origins !== undefined || names !== undefined,
    all: values.all === true,
    matches: (v) =>
      (fates === undefined || fates.has(v.fate as VariableFate)) &&
      (origins === undefined || origins.has(v.origin)) &&
      (names === undefined || names.some((pattern) => pattern.test(v.name))),
  };
}
