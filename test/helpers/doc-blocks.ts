/** The fenced code blocks of a Markdown page, with their language and first line. */
export interface Block {
  readonly lang: string;
  readonly code: string;
  readonly line: number;
}

export function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w+)\s*$/.exec(lines[i]!);
    if (open === null) continue;
    const start = i + 1;
    while (i + 1 < lines.length && lines[i + 1] !== "```") i++;
    blocks.push({ lang: open[1]!, code: lines.slice(start, i + 1).join("\n"), line: start });
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
