/**
 * Runs once before the suite, in the runner's process:
 * - dist/ must be compiled from the sources in the tree, since many tests run
 *   the compiled library in a child process (fault hosts, fixtures, the CLI,
 *   the README examples). When its recorded stamp differs from src/ (or dist/
 *   was never built) this compiles it, saying so on stderr; a failed compile
 *   fails the run instead of testing old code.
 * - every test file gets a private TMPDIR for this run (the workers inherit
 *   it); at the end anything a test left there is named and fails the run,
 *   and the directory is removed.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { distSourceStamp, recordedDistStamp } from "../scripts/dist-stamp.mjs";

const root = join(import.meta.dirname, "..");

function compileStaleDist(): void {
  const recorded = recordedDistStamp();
  if (recorded === distSourceStamp() && existsSync(join(root, "dist/index.js"))) return;
  const why = recorded === undefined ? "dist/ has no source stamp" : "src/ changed since dist/";
  process.stderr.write(`exactspawn tests: ${why}; running npm run compile first\n`);
  execFileSync("npm", ["run", "--silent", "compile"], { cwd: root, stdio: "inherit" });
  if (recordedDistStamp() !== distSourceStamp()) {
    throw new Error("npm run compile did not bring dist/ up to date with src/");
  }
}

/** The compiled C fixtures are a cache for this run only (test/fixtures/build.ts). */
const EXPECTED = /^exactspawn-fixtures-[0-9a-f]+$/;

/** Set while a run's TMPDIR exists: each project runs this setup, the first one owns it. */
const OWNER = "EXACTSPAWN_TEST_RUN_TMP";

export default function setup(): () => void {
  // Vitest runs the global setup once per project in one process; a second
  // private TMPDIR would nest in the first and race it at teardown.
  if (process.env[OWNER] !== undefined) return () => {};
  compileStaleDist();
  const runTmp = mkdtempSync(join(tmpdir(), "exactspawn-test-run-"));
  // Fault hosts run as `nobody` under scratch directories in here.
  chmodSync(runTmp, 0o755);
  const outerTmp = process.env["TMPDIR"];
  // Node >= 22 tooling may enable the module compile cache, which lives in
  // TMPDIR and would read as a leak: the runs under test keep it off.
  process.env["NODE_DISABLE_COMPILE_CACHE"] = "1";
  process.env["TMPDIR"] = runTmp;
  process.env[OWNER] = runTmp;
  return () => {
    delete process.env[OWNER];
    if (outerTmp === undefined) delete process.env["TMPDIR"];
    else process.env["TMPDIR"] = outerTmp;
    const left = readdirSync(runTmp).filter((name) => !EXPECTED.test(name));
    rmSync(runTmp, { recursive: true, force: true });
    if (left.length > 0) {
      // A teardown error alone does not change vitest's exit status.
      process.exitCode = 1;
      throw new Error(`tests left ${left.length} entries in TMPDIR: ${left.sort().join(", ")}`);
    }
  };
}
