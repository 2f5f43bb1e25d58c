#!/usr/bin/env node
// A content hash of what dist/ is compiled from (src/ and the tsconfigs).
// `npm run compile` writes it to dist/.source-stamp after tsc; the test
// suite's global setup compares it, so tests that run dist/ in a child
// process (fault hosts, fixtures, the CLI, the README) never run stale code.
// `node scripts/dist-stamp.mjs --write` records the current hash.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const DIST_STAMP_FILE = join(root, "dist", ".source-stamp");

function sourceFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else out.push(full);
  }
  return out;
}

/** The hash of src/** and the tsconfigs, as a short string. */
export function distSourceStamp() {
  const files = [
    ...sourceFiles(join(root, "src")),
    join(root, "tsconfig.json"),
    join(root, "tsconfig.build.json"),
  ]
    .map((file) => relative(root, file).split("\\").join("/"))
    .sort();
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(file);
    hash.update("\0");
    hash.update(readFileSync(join(root, file)));
    hash.update("\0");
  }
  return `d${hash.digest("hex").slice(0, 16)}`;
}

/** The stamp dist/ was last compiled from, or undefined when there is none. */
export function recordedDistStamp() {
  try {
    return readFileSync(DIST_STAMP_FILE, "utf8").trim();
  } catch {
    return undefined;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv[2] === "--write") writeFileSync(DIST_STAMP_FILE, `${distSourceStamp()}\n`);
  else process.stdout.write(`${distSourceStamp()}\n`);
}
