import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { PACKAGE_ROOT } from "../../src/native.js";

/**
 * The fenced code blocks of a Markdown page, with their language, the words
 * after it on the fence line (```ts continues → ["continues"]) and first line.
 */
export interface Block {
  readonly lang: string;
  readonly meta: readonly string[];
  readonly code: string;
  readonly line: number;
}

export function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w+)((?:[ \t]+[\w-]+)*)\s*$/.exec(lines[i]!);
    if (open === null) continue;
    const start = i + 1;
    while (i + 1 < lines.length && lines[i + 1] !== "```") i++;
    const meta = open[2]!.trim() === "" ? [] : open[2]!.trim().split(/\s+/);
    blocks.push({ lang: open[1]!, meta, code: lines.slice(start, i + 1).join("\n"), line: start });
    i++;
  }
  return blocks;
}

/** The lines a js block says it prints: its `// => text` comments, in order. */
export function expectedOutput(code: string): string[] {
  return code
    .split("\n")
    .filter((line) => line.startsWith("// => "))
    .map((line) => line.slice("// => ".length));
}

/**
 * One JavaScript or TypeScript example of the documentation, as a user
 * would paste it. Conventions of the pages (docs/README.md says them too):
 * - a `js` or `ts` block is a whole module: it imports what it uses;
 * - ```ts continues: the block goes on from the page's previous example (it
 *   is checked and run with that one's code in front of it);
 * - ```ts shape: a type's shape for reading (an interface, a signature), not
 *   an example: neither run nor checked here.
 */
export interface Example {
  /** "docs/spawn.md:424": the page and the first line of the block. */
  readonly where: string;
  readonly page: string;
  readonly lang: "js" | "ts";
  /** The code with what it continues in front of it. */
  readonly code: string;
  /** The block's own `// =>` lines (what it continues printed is expected too). */
  readonly expected: readonly string[];
}

export function examplesOf(root: string, page: string): Example[] {
  const examples: Example[] = [];
  for (const block of fencedBlocks(readFileSync(join(root, page), "utf8"))) {
    if (block.lang !== "js" && block.lang !== "ts") continue;
    if (block.meta.includes("shape")) continue;
    const before = block.meta.includes("continues") ? examples.at(-1) : undefined;
    if (block.meta.includes("continues") && before === undefined) {
      throw new Error(`${page}:${block.line}: continues no example`);
    }
    const code = before === undefined ? block.code : `${before.code}\n${block.code}`;
    examples.push({
      where: `${page}:${block.line}`,
      page,
      lang: block.lang,
      code,
      expected: [...(before?.expected ?? []), ...expectedOutput(block.code)],
    });
  }
  return examples;
}

/** README.md and every docs/*.md page, package-relative. */
export function documentationPages(root: string): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs];
}

/**
 * The example as JavaScript Node runs (types erased by the compiler, nothing
 * else changed): what `node --input-type=module` is given.
 */
export function runnableJs(example: { readonly code: string; readonly lang: string }): string {
  if (example.lang === "js") return example.code;
  return ts.transpileModule(example.code, {
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: false,
    },
  }).outputText;
}

/** Runs the example as a module from the package's root, `env` added to this process's. */
export function runExample(
  example: { readonly code: string; readonly lang: string },
  env: NodeJS.ProcessEnv,
): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, ["--input-type=module"], {
    cwd: PACKAGE_ROOT,
    encoding: "utf8",
    input: runnableJs(example),
    env: { ...process.env, ...env },
  });
}
