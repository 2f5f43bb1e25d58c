/**
 * `--env-file F`: a dotenv-style file used as the parent environment instead
 * of this process's, so `explain` and `run` are reproducible.
 *
 * Format, one variable per line: `NAME=value`, optionally preceded by
 * `export `. Blank lines and lines starting with `#` are ignored. A value in
 * single quotes is taken literally; in double quotes, `\n`, `\t`, `\"`, `\\`
 * and `\$` are unescaped; otherwise the rest of the line is the value as is
 * (no trimming, no expansion, no inline comments). A later line wins.
 * Errors name the file and line number, never a value.
 */
import { readUtf8File } from "./read-text.js";
import { UsageError } from "./usage-error.js";

const LINE = /^(?:export\s+)?([^=\s]+)=(.*)$/;
const DOUBLE_ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  '"': '"',
  "\\": "\\",
  $: "$",
};

function unquote(raw: string, where: string): string {
  if (raw.length >= 2 && raw.startsWith("'") && raw.endsWith("'")) return raw.slice(1, -1);
  if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) {
    return raw.slice(1, -1).replace(/\\(.)/g, (_match, char: string) => {
      const unescaped = DOUBLE_ESCAPES[char];
      if (unescaped === undefined) throw new UsageError(`${where}: unknown escape in a value`);
      return unescaped;
    });
  }
  return raw;
}

/** Parses env-file text. Pure; throws UsageError naming the line for a malformed one. */
export function parseEnvFile(text: string, label = "env file"): Map<string, string> {
  const env = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  lines.forEach((line, index) => {
    const where = `${label}:${index + 1}`;
    if (line.trim() === "" || line.trimStart().startsWith("#")) return;
    const match = LINE.exec(line);
    if (match === null) throw new UsageError(`${where}: expected NAME=value`);
    const [, name, raw] = match as unknown as [string, string, string];
    env.set(name, unquote(raw, where));
  });
  return env;
}

/**
 * Reads and parses an env file. Throws UsageError (naming `option`, the
 * option as the user typed it) when it cannot be read or parsed.
 */
export function readEnvFile(path: string, option = "--env-file"): Map<string, string> {
  return parseEnvFile(readUtf8File(path, option), path);
}
