/**
 * Parses a subcommand's options with messages in our own words.
 *
 * node:util parseArgs in strict mode reports `--exec-limit -5` as "argument
 * is ambiguous" and words its other errors for programmers. Here it runs
 * non-strict (so a value may start with "-": `--exec-limit -5` reaches the
 * option's own check) and every token is checked against the option table:
 * an unknown option, a missing value, or a value given to a switch is a
 * UsageError naming the option as typed. A value is never echoed.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import { didYouMean } from "../did-you-mean.js";
import { displayName } from "../errors.js";
import { UsageError } from "./usage-error.js";

type Options = NonNullable<ParseArgsConfig["options"]>;
type Strict<T extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>
>;

/**
 * The values and positionals of `args` for `command`'s option table `options`
 * (as strict parseArgs types them). Throws UsageError for a bad option.
 */
export function parseCommandLine<T extends Options>(
  command: string,
  args: string[],
  options: T,
): Strict<T> {
  const { values, positionals, tokens } = parseArgs({
    args,
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const shown = displayName(token.rawName);
    const option = options[token.name];
    if (option === undefined) {
      const hint = token.rawName.startsWith("--")
        ? didYouMean(
            token.rawName,
            Object.keys(options).map((name) => `--${name}`),
          )
        : "";
      throw new UsageError(`unknown option ${shown}${hint} (see "exactspawn ${command} --help")`);
    }
    const long = `--${token.name}`;
    if (option.type === "boolean") {
      if (token.value !== undefined) throw new UsageError(`${long} takes no value`);
      continue;
    }
    // "--" right after an option that needs a value is the end of the options, not the value.
    if (token.value === undefined || (token.value === "--" && !token.inlineValue)) {
      throw new UsageError(`${long} needs a value`);
    }
  }
  return { values, positionals } as unknown as Strict<T>;
}
