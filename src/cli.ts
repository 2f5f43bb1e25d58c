#!/usr/bin/env node
/** The `exactspawn` command: dispatches to one module per subcommand. */
import { BENCH_HELP, runBench } from "./cli/bench-command.js";
import { EXPLAIN_HELP, runExplain } from "./cli/explain-command.js";
import { LIMITS_HELP, runLimits } from "./cli/limits-command.js";
import { RUN_HELP, runRun } from "./cli/run-command.js";
import { runSandbox, SANDBOX_HELP } from "./cli/sandbox-command.js";
import { isUsageError } from "./cli/usage-error.js";
import { firstLine } from "./errors.js";

const HELP = `Usage: exactspawn <command> [options]

Commands:
  limits     the kernel's exec limits here and the env budget derived from them
  sandbox    what the kernel here can enforce for the sandbox option
  explain    what a bash step's child would get: every variable's fate, origin and size
  run        run a command as a bash step with that context and those values
  bench      run the side-by-side benchmarks and print a combined ratio table

Run "exactspawn <command> --help" for a command's options. Docs: docs/cli.md`;

const commands: Record<
  string,
  { run: (argv: string[]) => number | Promise<number>; help: string }
> = {
  limits: { run: runLimits, help: LIMITS_HELP },
  sandbox: { run: runSandbox, help: SANDBOX_HELP },
  explain: { run: runExplain, help: EXPLAIN_HELP },
  run: { run: runRun, help: RUN_HELP },
  bench: { run: runBench, help: BENCH_HELP },
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(`${HELP}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (command === undefined) {
    process.stderr.write(`exactspawn: unknown command "${name}" (try --help)\n`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    const message = firstLine(error);
    process.stderr.write(`exactspawn ${name}: ${message}\n`);
    return isUsageError(error) ? 2 : 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
