#!/usr/bin/env node
// Whether the toolchain node-gyp uses can link a static program, the way the
// exec helper is linked (binding.gyp: `-static`). A glibc system without its
// static archive (libc.a: Fedora/RHEL without glibc-static) cannot; the addon
// is then built without the helper, and steps that need it fail naming why.
//   node scripts/static-libc.mjs           → prints 1 or 0 (binding.gyp's static_libc)
//   node scripts/static-libc.mjs --note F  → writes to F why the helper was left out
// The compiler is the one make's link rule runs: $LINK, else $CXX, else g++;
// $LDFLAGS as make passes them.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** undefined when a static program links, else the linker's last words. */
function staticLinkFailure() {
  const [compiler, ...pre] = (process.env.LINK || process.env.CXX || "g++").trim().split(/\s+/);
  const ldflags = (process.env.LDFLAGS ?? "").trim().split(/\s+/).filter(Boolean);
  const dir = mkdtempSync(join(tmpdir(), "exactspawn-static-libc-"));
  try {
    const run = spawnSync(
      compiler,
      [...pre, "-static", "-x", "c++", "-", "-o", join(dir, "a.out"), ...ldflags],
      { input: "int main() { return 0; }\n", encoding: "utf8" },
    );
    if (run.status === 0) return undefined;
    const lines = `${run.error?.message ?? ""}\n${run.stderr ?? ""}`
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !/ld returned|collect2/.test(line));
    return lines.find((line) => /cannot find|not found/.test(line)) ?? lines.at(-1) ?? "";
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const failure = staticLinkFailure();
if (process.argv[2] === "--note") {
  writeFileSync(
    process.argv[3],
    "not built: the toolchain cannot link a static program (the exec helper links -static; " +
      `on Fedora/RHEL install glibc-static, then npm rebuild exactspawn): ${failure ?? "unknown"}\n`,
  );
} else {
  process.stdout.write(failure === undefined ? "1" : "0");
}
