/** The error a subcommand throws for a bad command line: one line on stderr, exit status 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Whether `error` is a usage error: ours, or one thrown by `node:util` parseArgs. */
export function isUsageError(error: unknown): boolean {
  if (error instanceof UsageError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_");
}
