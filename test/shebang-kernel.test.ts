/**
 * The `#!` part of the exact model against the real kernel: for each first
 * line and argv[0], the kernel's largest environment (found by bisection over
 * real execs, independent of the model) is the model's, one byte more is
 * E2BIG, and spawn starts the child at the edge and names the variables
 * (never a raw E2BIG) one byte past it. Runs under `ulimit -s 1024` (a
 * 256 KiB limit) so each exec is small.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("./fixtures/shebang-edge.mjs", import.meta.url));

interface Outcome {
  exitCode: number | null;
  code: string | null;
  names: string[];
}

interface Case {
  label: string;
  argv0: string;
  kernelMax: number;
  modelMax: number;
  plainMax: number;
  scriptBytes: number;
  interpreters: Array<{ path: string; arg: string | null }>;
  at: { fits: boolean; footprint: number; checked: boolean };
  over: { fits: boolean; overBy: number };
  kernelAt: boolean;
  kernelOver: boolean;
  spawnAt: Outcome;
  spawnOver: Outcome;
}

function report(): { limits: { execLimit: number; source: string }; cases: Case[] } {
  const result = spawnSync(
    "bash",
    ["-c", `ulimit -s 1024 && exec "${process.execPath}" "${fixture}"`],
    { encoding: "utf8", env: { ...process.env, EXACTSPAWN_NATIVE: "required" } },
  );
  if (result.status !== 0) throw new Error(`fixture failed: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

const { limits, cases } = report();
const find = (label: string, argv0 = "= path") =>
  cases.find((c) => c.label === label && c.argv0 === argv0)!;

describe("#! scripts at the byte boundary (256 KiB limit)", () => {
  it("probes the limit natively", () => {
    expect(limits.source).toBe("native");
    expect(limits.execLimit).toBe(256 * 1024);
    expect(cases.length).toBe(18);
  });

  describe.each(cases.map((c) => [`${c.label}, argv0 ${c.argv0}`, c] as const))("%s", (_, c) => {
    it("predicts the kernel's largest environment to the byte", () => {
      expect(c.modelMax).toBe(c.kernelMax);
      expect(c.at).toMatchObject({ fits: true, footprint: limits.execLimit });
      expect(c.over).toEqual({ fits: false, overBy: 1 });
    });

    it("execs at the edge and fails with E2BIG one byte past it", () => {
      expect(c.kernelAt).toBe(true);
      expect(c.kernelOver).toBe(false);
    });

    it("spawn runs at the edge and names the variables one byte past it", () => {
      expect(c.spawnAt).toEqual({ exitCode: 0, code: null, names: [] });
      expect(c.spawnOver.code).toBe("ERR_EXACTSPAWN_EXEC_TOO_LARGE");
      expect(c.spawnOver.names).toContain("LAST");
    });
  });

  // The kernel's costs when argv[0] is the path: interpreter and argument with their NULs.
  it.each([
    ["#!/bin/sh", "= path", 8],
    ["#!/bin/sh -e", "= path", 11],
    ["#!/usr/bin/env bash", "= path", 18],
  ])("%s with argv0 %s costs %i bytes more than a binary", (label, argv0, extra) => {
    const c = find(label, argv0);
    expect(c.plainMax - c.kernelMax).toBe(extra);
    expect(c.scriptBytes).toBe(extra);
  });

  it("splits lines as the kernel does: spaces, tabs, one argument, truncation", () => {
    expect(find("#!<sp><tab><sp>/bin/sh <tab><sp><sp>-e <tab><sp>").interpreters).toEqual([
      { path: "/bin/sh", arg: "-e" },
    ]);
    expect(find("#!/bin/true -a<sp><sp>b<tab>c").interpreters).toEqual([
      { path: "/bin/true", arg: "-a  b\tc" },
    ]);
    // The buffer keeps 253 bytes after "#!": "/bin/true " and 243 of the 300.
    expect(find("#!/bin/true + 300-byte argument").interpreters).toEqual([
      { path: "/bin/true", arg: "a".repeat(243) },
    ]);
  });

  it("follows interpreters that are scripts, five levels deep", () => {
    expect(find("five nested #! levels").interpreters.map((i) => i.arg)).toEqual([
      "l5",
      "l4",
      "l3",
      "l2",
      "l1",
    ]);
    expect(find("#!<script with #!/bin/sh -e>").interpreters.at(-1)).toEqual({
      path: "/bin/sh",
      arg: "-e",
    });
  });

  it("does not read the file when argv[0] is longer than any #! rewrite adds", () => {
    const c = find("#!/bin/true, 200-byte script name", "2000 bytes");
    expect(c.at.checked).toBe(false);
    expect(c.scriptBytes).toBe(0);
    expect(c.kernelMax).toBe(c.plainMax);
  });
});
