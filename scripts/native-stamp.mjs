#!/usr/bin/env node
// Prints a short content hash of the native sources (native/**/*.{cc,h,map} and
// binding.gyp). binding.gyp compiles it into the addon, and the test suite
// recomputes it to prove a committed prebuild was built from the sources in
// the tree. Kept dependency-free: gyp runs it before anything is installed.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

function nativeFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...nativeFiles(full));
    else if (/\.(cc|h|map)$/.test(entry.name)) out.push(full);
  }
  return out;
}

export function nativeSourceStamp() {
  const files = [...nativeFiles(join(root, "native")), join(root, "binding.gyp")]
    .map((file) => relative(root, file).split("\\").join("/"))
    .sort();
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(file);
    hash.update("\0");
    hash.update(readFileSync(join(root, file)));
    hash.update("\0");
  }
  return `s${hash.digest("hex").slice(0, 16)}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.stdout.write(`${nativeSourceStamp()}\n`);
}
