/**
 * Every JavaScript and TypeScript example of README.md and docs/ (issue 39,
 * item 1): what a host author pastes must compile in a `strict: true`
 * TypeScript project against the package's own declarations (dist/*.d.ts)
 * and must run as written.
 *
 * - Type-check: all examples in one program (each a module of its own, .mts,
 *   as in an ESM project), `strict: true`, `exactspawn` resolved to this
 *   package's dist/index.d.ts; every diagnostic is named by page and line.
 * - Run: each example's code (types erased) under `node --input-type=module`
 *   from the package root, so `exactspawn` resolves to this package; it must
 *   exit 0, write nothing to stderr and print exactly its `// =>` lines.
 *   README.md's and docs/agent-host.md's examples run in their own tests
 *   (test/readme.test.ts, test/agent-host.test.ts); they are type-checked here.
 *
 * Seen red first: docs/agent-host.md's recipe (then `js`) had 7 errors under
 * strict, docs/runtime.md's `catch (error) { error.step }` did not compile
 * (`error` is unknown), and 17 of the other examples used names they never
 * defined (`runtime`, `runId`, `env`, `workdir`…), so none of them ran.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { cgroupSupport, pidNamespaceSupport, sandboxSupport } from "../src/index.js";
import { PACKAGE_ROOT } from "../src/native.js";
import { documentationPages, type Example, examplesOf, runExample } from "./helpers/doc-blocks.js";

const pages = documentationPages(PACKAGE_ROOT);
const examples = pages.flatMap((page) => examplesOf(PACKAGE_ROOT, page));
/** Run by their own tests (with the checks particular to them). */
const RUN_ELSEWHERE = new Set(["README.md", "docs/agent-host.md"]);
const native = process.env["EXACTSPAWN_NATIVE"] !== "0";

/** Why this host cannot run an example as written (it asks for what the host lacks), or undefined. */
function cannotRun(example: Example): string | undefined {
  if (/contain: true/.test(example.code)) {
    if (!cgroupSupport().available && !pidNamespaceSupport().available) {
      return "contain: true, and this host can contain nothing";
    }
  }
  // A limit needs its controller delegated to the parent (docs/containment.md).
  const limits = { memoryMax: "memory", pidsMax: "pids", cpuMax: "cpu" } as const;
  const lacking = Object.entries(limits)
    .filter(([key, controller]) => {
      if (!new RegExp(`\\b${key}:`).test(example.code)) return false;
      return !cgroupSupport().controllers.includes(controller);
    })
    .map(([, controller]) => controller);
  if (lacking.length > 0) {
    return `a containment limit, and this host delegates no ${lacking.join(", ")} controller`;
  }
  if (/sandbox: \{/.test(example.code) && sandboxSupport().missing.length > 0) {
    return `a sandbox, and this host lacks ${sandboxSupport().missing.join(", ")}`;
  }
  return undefined;
}

const scratch = mkdtempSync(join(tmpdir(), "docs-examples-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The diagnostics of all examples in one strict program, as "page:line: message". */
function typeErrors(all: readonly Example[]): string[] {
  const dir = join(scratch, "check");
  mkdirSync(dir);
  // Third-party types (pino, @types/node) resolve as in a project that installed them.
  symlinkSync(join(PACKAGE_ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  const files = new Map<string, Example>();
  all.forEach((example, i) => {
    const file = join(dir, `example-${i}.mts`);
    writeFileSync(file, example.code);
    files.set(file, example);
  });
  const program = ts.createProgram([...files.keys()], {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ["node"],
    skipLibCheck: true,
    noEmit: true,
    paths: { exactspawn: [join(PACKAGE_ROOT, "dist", "index.d.ts")] },
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    const example = d.file === undefined ? undefined : files.get(d.file.fileName);
    if (example === undefined || d.file === undefined || d.start === undefined) return text;
    // The example's line in its page: its own lines come last in its code.
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    const own = example.code.split("\n").length - line;
    const [page, first] = example.where.split(":");
    const blockLines = example.code.split("\n").length;
    return `${page}:${Number(first) + blockLines - own}: ${text}`;
  });
}

describe("documentation examples", () => {
  it("each js/ts block is a whole module that imports the package, continues one, or is a shape", () => {
    const loose = examples.filter(
      (e) => !/from "exactspawn"/.test(e.code) && !e.page.startsWith("README"),
    );
    expect(loose.map((e) => e.where)).toEqual([]);
    expect(examples.length).toBeGreaterThanOrEqual(25);
  });

  it(`all ${examples.length} type-check under strict: true against the package's declarations`, () => {
    expect(typeErrors(examples)).toEqual([]);
  });

  for (const example of examples.filter((e) => !RUN_ELSEWHERE.has(e.page))) {
    it.runIf(native)(`${example.where} runs and prints what its // => comments say`, (context) => {
      const reason = cannotRun(example);
      if (reason !== undefined) context.skip(`not run here: ${reason}`);
      const run = runExample(example, { NO_COLOR: "1" });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      if (example.expected.length > 0) {
        expect(run.stdout.trimEnd().split("\n")).toEqual(example.expected);
      }
    });
  }
});
