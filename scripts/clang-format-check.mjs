#!/usr/bin/env node
// Fails when a C++ file under native/ is not formatted by .clang-format.
// Skipped with a notice when clang-format is not installed (.ci/run installs it).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return files(full);
    return /\.(cc|h|c)$/.test(entry.name) ? [full] : [];
  });
}

const sources = [...files("native"), ...files("test/fixtures"), ...files("bench")].filter((f) =>
  /\.(cc|h|c)$/.test(f),
);
const probe = spawnSync("clang-format", ["--version"], { encoding: "utf8" });
if (probe.error) {
  console.warn("clang-format not found: C++ format check skipped");
  process.exit(0);
}
const result = spawnSync("clang-format", ["--dry-run", "--Werror", ...sources], {
  stdio: "inherit",
});
process.exit(result.status ?? 1);
