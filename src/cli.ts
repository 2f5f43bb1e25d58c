#!/usr/bin/env node
/** The `exactspawn` command: dispatches to one module per subcommand. */
import { LIMITS_HELP, runLimits } from "./cli/limits-command.js";

const HELP = `Usage: exactspawn <command> [options]

Commands:
  limits     the kernel's exec limits here and the env budget derived from them

Run "exactspawn <command> --help" for a command's options.`;

const commands: Record<
  string,
  { run: (argv: string[]) => number | Promise<number>; help: string }
> = {
  limits: { run: runLimits, help: LIMITS_HELP },
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
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    process.stderr.write(`exactspawn ${name}: ${message}\n`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
