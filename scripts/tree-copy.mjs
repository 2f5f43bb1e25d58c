// A checkout's files, copied as they are now into a scratch directory: what
// `git ls-files` lists as tracked or untracked and not ignored (uncommitted
// edits included, deleted files left out), with their timestamps, so make
// and node-gyp in the copy see what the checkout's build saw. Used by the
// mutant runner (scripts/mutants.mjs) and the kernel tier's mutants
// (scripts/kernels.mjs).
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";

/** Copies `tree`'s tracked and untracked (not ignored) files into `dir`. */
export function copyTreeFiles(tree, dir) {
  const files = execFileSync(
    "git",
    ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    { cwd: tree, encoding: "utf8" },
  )
    .split("\0")
    .filter((file) => file !== "" && existsSync(join(tree, file)));
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(tree, file), join(dir, file), { preserveTimestamps: true });
  }
}
