/**
 * Every relative link in README.md and docs/*.md reaches a file that exists,
 * and a `#fragment` into a Markdown page names one of its headings (GitHub's
 * anchors: lower case, punctuation dropped, spaces to hyphens, repeats
 * numbered). Links to other sites are not followed.
 *
 * Seen red once: with docs/sandbox.md absent, the links spawn.md, runtime.md,
 * cli.md, README.md and docs/README.md make to it were all named.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../src/native.js";

const pages = [
  join(PACKAGE_ROOT, "README.md"),
  ...readdirSync(join(PACKAGE_ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(PACKAGE_ROOT, "docs", name)),
];

/** The text outside fenced code blocks (links there are examples, not links). */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "");
}

/** GitHub's anchor for each heading of a page. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const match of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = match[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    out.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return out;
}

function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  for (const match of prose(readFileSync(page, "utf8")).matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1]!;
    if (/^[a-z]+:/i.test(target)) continue;
    const [path = "", fragment] = target.split("#");
    const file = path === "" ? page : join(dirname(page), path);
    if (!existsSync(file)) {
      broken.push(`${target} (no such file)`);
      continue;
    }
    if (fragment !== undefined && file.endsWith(".md")) {
      if (!anchors(readFileSync(file, "utf8")).has(fragment)) {
        broken.push(`${target} (no such heading)`);
      }
    }
  }
  return broken;
}

describe("documentation links", () => {
  it.each(pages.map((page) => [relative(PACKAGE_ROOT, page), page]))(
    "%s links only to pages and headings that exist",
    (_name, page) => {
      expect(brokenLinks(page)).toEqual([]);
    },
  );
});

/**
 * User docs speak of the user's task: the systems this package was modelled on
 * are named in docs/migrating.md (and the benchmark anchors in
 * docs/performance.md) only.
 *
 * Seen red once: with "the amplihack recipe runner's behaviour" put back in
 * docs/cli.md, that page was named.
 */
describe("documentation names no other system outside migrating.md", () => {
  const exempt = new Set(["migrating.md", "performance.md"]);
  it.each(
    pages
      .filter((page) => !exempt.has(relative(join(PACKAGE_ROOT, "docs"), page)))
      .map((page) => [relative(PACKAGE_ROOT, page), page]),
  )("%s names none of them", (_name, page) => {
    const text = readFileSync(page, "utf8");
    expect(text.match(/amplihack|acpx|agentix|[Rr]ecipe runner|\bexeca\b/g) ?? []).toEqual([]);
  });
});
