#!/usr/bin/env node
/** The `exactspawn` command: dispatches to one module per subcommand. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BENCH_HELP, benchmarksShipped, runBench } from "./cli/bench-command.js";
import { EXPLAIN_HELP, runExplain } from "./cli/explain-command.js";
import { LIMITS_HELP, runLimits } from "./cli/limits-command.js";
import { RUN_HELP, runRun } from "./cli/run-command.js";
import { runSandbox, SANDBOX_HELP } from "./cli/sandbox-command.js";
import { isUsageError } from "./cli/usage-error.js";
import { didYouMean } from "./did-you-mean.js";
import { displayName, escapeControls, firstLine } from "./errors.js";
import { PACKAGE_ROOT } from "./native.js";

/** The top-level help; `bench` is listed only where the benchmarks are (a source checkout). */
function help(): string {
  const bench = benchmarksShipped()
    ? "\n  bench      run the side-by-side benchmarks and print a combined ratio table"
    : "";
  return `Usage: exactspawn <command> [options]
       exactspawn --version

Commands:
  limits     the kernel's exec limits here and the env budget derived from them
  sandbox    what the kernel here can enforce for the sandbox option
  explain    what a bash step's child would get: every variable's fate, origin and size
  run        run a command as a bash step with that context and those values${bench}

Run "exactspawn <command> --help" for a command's options. Docs: ${docsLocation()}`;
}

/**
 * Where the command's documentation is: the installed package's own
 * docs/cli.md (the package ships docs/), else the repository's page named
 * in package.json, else the bare relative path.
 */
function docsLocation(): string {
  const local = join(PACKAGE_ROOT, "docs", "cli.md");
  if (existsSync(local)) return local;
  try {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as {
      repository?: string | { url?: string };
    };
    const repository =
      typeof manifest.repository === "string" ? manifest.repository : manifest.repository?.url;
    const base = repository?.replace(/^git\+/, "").replace(/\.git$/, "");
    if (base?.startsWith("https://")) return `${base}/blob/main/docs/cli.md`;
  } catch {
    // No readable manifest: the relative path below.
  }
  return "docs/cli.md";
}

/** The package's version, from its own package.json. */
function version(): string {
  const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as {
    version?: unknown;
  };
  return String(manifest.version);
}

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
  if (name === undefined) {
    // A usage error (nothing to do): the usage goes to stderr, exit 2.
    process.stderr.write(`${help()}\n`);
    return 2;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(`${help()}\n`);
    return 0;
  }
  if (name === "--version" || name === "-V") {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (command === undefined) {
    const what = name.startsWith("-") ? "option" : "command";
    const known = name.startsWith("-") ? ["--help", "--version"] : Object.keys(commands);
    const hint = didYouMean(name, known);
    process.stderr.write(
      `exactspawn: unknown ${what} "${displayName(name)}"${hint} (try --help)\n`,
    );
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    const message = firstLine(error);
    process.stderr.write(`exactspawn ${name}: ${escapeControls(message)}\n`);
    return isUsageError(error) ? 2 : 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
