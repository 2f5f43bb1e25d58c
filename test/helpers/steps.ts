/** Shared helpers for the bash-step integration tests: private temp roots, digests, error text. */
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";

export function sha256(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

/** A private per-test temporary root; `removeRoots()` deletes every one made. */
export function makeRootFactory(): { root: () => string; removeRoots: () => void } {
  const roots: string[] = [];
  return {
    root: () => {
      const dir = mkdtempSync(join(tmpdir(), "exactspawn-steps-test-"));
      roots.push(dir);
      return dir;
    },
    removeRoots: () => {
      for (const dir of roots.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Entries of a temp root that a bash step left behind (any name of the library's). */
export function leftovers(root: string): string[] {
  return readdirSync(root).filter((name) => name.includes("exactspawn"));
}

/** Every text an error exposes: message, stack, own properties, the cause chain, util.inspect. */
export function errorText(error: unknown): string {
  const parts: string[] = [inspect(error, { depth: 10, showHidden: true })];
  let current: unknown = error;
  const seen = new Set<unknown>();
  while (current !== undefined && current !== null && !seen.has(current)) {
    seen.add(current);
    if (current instanceof Error) {
      parts.push(current.message, current.stack ?? "", String(current));
      for (const key of Object.getOwnPropertyNames(current)) {
        const value = (current as unknown as Record<string, unknown>)[key];
        parts.push(
          typeof value === "string"
            ? value
            : Buffer.isBuffer(value)
              ? value.toString("utf8")
              : inspect(value),
        );
      }
      current = current.cause;
    } else {
      parts.push(inspect(current));
      break;
    }
  }
  return parts.join("\n");
}

/** Awaits a promise expected to reject and returns the rejection. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

/** A shell single-quoted word. */
export function shQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
