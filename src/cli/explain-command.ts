/**
 * `exactspawn explain`: what a bash step's child would get — every
 * variable's fate, origin, size and reason, the budget used and the totals.
 * Plans only (no files, no spawn) and never prints a value.
 */
import { escapeControls, escapeJsonControls, firstLine } from "../errors.js";
import { parseCommandLine } from "./command-line.js";
import {
  EXPLAIN_FILTER_HELP,
  EXPLAIN_FILTER_OPTIONS,
  explainFilter,
  SUMMARY_ROWS,
} from "./explain-filter.js";
import { explainReport, explainTable } from "./explain-view.js";
import { STEP_OPTIONS, STEP_OPTIONS_HELP, stepRequest } from "./step-options.js";
import { planStep, runtimeFor } from "./step-plan.js";

export const EXPLAIN_HELP = `Usage: exactspawn explain [options] [--fate F] [--origin O] [--name GLOB] [--all] [--json] [-- COMMAND]

Plans the bash step "COMMAND" (default: true) with the given context, step values and parent
environment, and prints, for every variable the child would get or that was refused, its fate
(inline, spilled, trimmed, skipped, dropped), the layer it came from, its size (NAME=value plus
NUL) and the reason; then the budget used (footprint / exec limit) and the totals. Values are
never printed. Nothing is written and nothing runs.

Options:
${STEP_OPTIONS_HELP}
${EXPLAIN_FILTER_HELP}
  --json                one JSON object (schema: exactspawn.explain/v1) instead of a table
  -h, --help

Exit status: 0 planned; 1 the step cannot be planned (e.g. protected variables alone exceed the
budget); 2 usage error.`;

export function runExplain(argv: string[]): number {
  const { values, positionals } = parseCommandLine("explain", argv, {
    ...STEP_OPTIONS,
    ...EXPLAIN_FILTER_OPTIONS,
    json: { type: "boolean" },
  });
  if (values.help) {
    process.stdout.write(`${EXPLAIN_HELP}\n`);
    return 0;
  }
  const filter = explainFilter(values);
  const request = stepRequest(values, positionals, "true");
  const runtime = runtimeFor(request);
  let report: ReturnType<typeof explainReport>;
  try {
    report = explainReport(planStep(runtime, request), request.command, request.limitsSource);
  } catch (error) {
    const message = firstLine(error);
    process.stderr.write(`exactspawn explain: ${escapeControls(message)}\n`);
    return 1;
  }
  const listed = filter.filtered
    ? { ...report, variables: report.variables.filter(filter.matches) }
    : report;
  if (values.json) {
    process.stdout.write(`${escapeJsonControls(JSON.stringify(listed, null, 2))}\n`);
    return 0;
  }
  const summaryOnly = !filter.filtered && !filter.all && report.variables.length > SUMMARY_ROWS;
  process.stdout.write(
    `${explainTable(summaryOnly ? { ...report, variables: [] } : listed, process.stdout, {
      listed: summaryOnly ? 0 : listed.variables.length,
      summaryOnly,
    })}\n`,
  );
  return 0;
}
