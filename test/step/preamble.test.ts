/**
 * The preamble and the script loader against the real bash: exact text,
 * byte-identical read-back from every kind of descriptor (memfd, O_TMPFILE,
 * unlinked file) including a property test over arbitrary bytes without
 * NUL, fail-closed on every read error, and the planner's exact argv size.
 */
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { planSpill } from "../../src/env/spill-plan.js";
import { InvalidEnvError } from "../../src/errors.js";
import { execFits, PER_VALUE_ENV_CAP } from "../../src/limits.js";
import { nativeBinding } from "../../src/native.js";
import {
  bashArgvSizer,
  bashInvocation,
  composeScript,
  INLINE_SCRIPT_MAX_BYTES,
} from "../../src/step/bash-script.js";
import {
  renderPreamble,
  type SpillRead,
  singleQuote,
  spillReads,
  spillValuesBytes,
} from "../../src/step/preamble.js";
import {
  type DescriptorKind,
  openSpillDescriptor,
  type SpillDescriptor,
} from "../../src/step/spill-files.js";
import { captureLog } from "../helpers/capture-log.js";

const BASH = "/bin/bash";
const SENTINEL = "SENTINEL-pr34mble";
const roots: string[] = [];
function testRoot(prefix = "exactspawn-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  roots.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of roots) rmSync(dir, { recursive: true, force: true });
});

const binding = nativeBinding();
/** The kinds this project can make: memfd needs the addon (off in the fallback project). */
const KINDS: DescriptorKind[] = [
  ...(binding?.sealedMemfd === undefined ? [] : (["memfd"] as const)),
  "tmpfile",
  "unlinked",
];

/** Runs `script` with `bash -c`, the given descriptors at fd 3, 4, … and the step's locale. */
function runBash(
  script: string,
  fds: readonly number[] = [],
  env: Record<string, string> = { PATH: "/usr/bin:/bin" },
): SpawnSyncReturns<Buffer> {
  return spawnSync(BASH, ["--norc", "--noprofile", "-c", script], {
    env,
    stdio: ["ignore", "pipe", "pipe", ...fds],
    maxBuffer: 64 * 1024 * 1024,
  });
}

function open(kind: DescriptorKind, bytes: Buffer): SpillDescriptor {
  return openSpillDescriptor("test", bytes, { binding, kinds: [kind], tmpdir: testRoot() });
}

/** Reads `values` back through the preamble from one descriptor and prints `len:bytes` per value. */
function roundTrip(kind: DescriptorKind, values: readonly Buffer[], locale = "C.UTF-8") {
  const reads: SpillRead[] = values.map((v, i) => ({ name: `V${i}`, bytes: v.length }));
  const descriptor = open(kind, spillValuesBytes(values));
  try {
    // The command prints lengths in bytes: LC_ALL=C is set after the preamble ran.
    const command = `LC_ALL=C\n${reads.map((r) => `printf '%d:%s' "\${#${r.name}}" "$${r.name}"`).join("\n")}\n`;
    const result = runBash(
      composeScript(renderPreamble(reads, { values: 3 }), command),
      [descriptor.fd],
      { PATH: "/usr/bin:/bin", LC_ALL: locale },
    );
    const expected = Buffer.concat(values.flatMap((v) => [Buffer.from(`${v.length}:`), v]));
    return { result, expected };
  } finally {
    descriptor.close();
  }
}

describe("renderPreamble", () => {
  it("loads every value at once, assigns one per spill, then drops the array and closes the descriptor", () => {
    expect(
      renderPreamble(
        [
          { name: "RECIPE_VAR_r", bytes: 12 },
          { name: "R", bytes: 12, sameAs: "RECIPE_VAR_r" },
          { name: "RECIPE_VAR_s", bytes: 3 },
        ],
        { values: 3 },
      ),
    ).toBe(
      `mapfile -d '' -u 3 __exactspawn_spill && [ "\${#__exactspawn_spill[@]}" = 3 ] && ` +
        `[ "\${__exactspawn_spill[2]}" = . ] || ` +
        "{ printf 'exactspawn: failed to load the spilled env values\\n' >&2; exit 125; }\n" +
        "RECIPE_VAR_r=$" +
        "{__exactspawn_spill[0]}\n" +
        "R=$RECIPE_VAR_r\n" +
        "RECIPE_VAR_s=$" +
        "{__exactspawn_spill[1]}\n" +
        "unset __exactspawn_spill\n" +
        "exec 3<&-\n",
    );
    expect(spillValuesBytes(["ab", Buffer.from([0xff]), "é"])).toEqual(
      Buffer.from([0x61, 0x62, 0, 0xff, 0, 0xc3, 0xa9, 0, 0x2e, 0]),
    );
    expect(renderPreamble([])).toBe("");
    expect(renderPreamble([], { script: 4 })).toBe("exec 4<&-\n");
  });

  it("copies a value identical to an earlier one instead of reading it again, byte for byte", () => {
    const big = `${SENTINEL}\n\\ é\n\n`.repeat(5000);
    const reads = spillReads(["RECIPE_VAR_v", "V", "W"], (name) => (name === "W" ? "w" : big));
    expect(reads).toEqual([
      { name: "RECIPE_VAR_v", bytes: Buffer.byteLength(big) },
      { name: "V", bytes: Buffer.byteLength(big), sameAs: "RECIPE_VAR_v" },
      { name: "W", bytes: 1 },
    ]);
    const preamble = renderPreamble(reads, { values: 3 });
    expect(preamble).toContain("\nV=$RECIPE_VAR_v\n");
    const descriptor = open(KINDS[0]!, spillValuesBytes([big, "w"]));
    try {
      const result = runBash(`${preamble}printf '%s|%s|%s' "$RECIPE_VAR_v" "$V" "$W"`, [
        descriptor.fd,
      ]);
      expect(result.stdout.toString()).toBe(`${big}|${big}|w`);
    } finally {
      descriptor.close();
    }
    expect(() =>
      renderPreamble([{ name: "V", bytes: 1, sameAs: "NOT_READ" }], { values: 3 }),
    ).toThrow(InvalidEnvError);
  });

  it.each(["PATH", "BASH_ENV", "my-var", "1X", "IFS", "COMP_WORDS", "LC_ALL", ""])(
    "refuses the unspillable name %j",
    (name) => {
      expect(() => renderPreamble([{ name, bytes: 1 }], { values: 3 })).toThrow(InvalidEnvError);
    },
  );

  it("refuses byte counts that are not positive integers and bad descriptors", () => {
    for (const bytes of [0, -1, 1.5, Number.NaN]) {
      expect(() => renderPreamble([{ name: "A", bytes }], { values: 3 })).toThrow(InvalidEnvError);
    }
    expect(() => renderPreamble([{ name: "A", bytes: 1 }])).toThrow(TypeError);
    expect(() => renderPreamble([{ name: "A", bytes: 1 }], { values: 2 })).toThrow(TypeError);
  });

  it("quotes for bash", () => {
    expect(singleQuote("a'b")).toBe("'a'\\''b'");
    expect(runBash(`printf %s ${singleQuote("it's $(x) `y` \\ \n")}`).stdout.toString()).toBe(
      "it's $(x) `y` \\ \n",
    );
  });
});

const table: [string, string][] = [
  ["one byte", "x"],
  ["200 KiB", `${SENTINEL}${"r".repeat(200 * 1024)}`],
  ["1 MiB", `${SENTINEL}${"abcdefgh".repeat(128 * 1024)}`],
  ["quotes", `${SENTINEL} 'single' "double" '\\'' \\" `],
  ["command substitution", `${SENTINEL}$(touch /tmp/pwned) \`id\` $HOME \${X:-y}`],
  ["glob and separators", `${SENTINEL} * ? [a] ; && || | > < & # ~`],
  ["newlines", `${SENTINEL}\nline two\n\nline four`],
  ["trailing newlines", `${SENTINEL}\n\n\n`],
  ["only newlines", "\n\n"],
  ["leading and trailing spaces", `   ${SENTINEL} \t `],
  ["non-ASCII", `${SENTINEL} é ü 日本語 🙂 \u00a0`],
  ["backslashes", `${SENTINEL}\\n \\t \\\\ \\`],
  ["option-like", "-n -e --"],
];

describe.each(KINDS)("bash round trip through a %s descriptor", (kind) => {
  it.each(table)("round-trips %s byte for byte", (_label, value) => {
    const { result, expected } = roundTrip(kind, [Buffer.from(value, "utf8")]);
    expect(result.stderr.toString()).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout.equals(expected)).toBe(true);
  });

  it("round-trips every value at once from one descriptor and does not export them", () => {
    const values = table.map(([, v]) => Buffer.from(v, "utf8"));
    const reads = values.map((v, i) => ({ name: `V${i}`, bytes: v.length }));
    const descriptor = open(kind, spillValuesBytes(values));
    try {
      const command =
        'printenv V0 || echo "not exported"\n[ -e /proc/$$/fd/3 ] && echo open || echo closed\n' +
        'declare -p __exactspawn_spill 2>/dev/null || echo "no array"\n';
      const result = runBash(composeScript(renderPreamble(reads, { values: 3 }), command), [
        descriptor.fd,
      ]);
      expect(result.status).toBe(0);
      // The descriptor is closed before the command runs (without the
      // `exec 3<&-` line this goes red: seen, restored).
      expect(result.stdout.toString()).toBe("not exported\nclosed\nno array\n");
    } finally {
      descriptor.close();
    }
  });

  it("property: any bytes without NUL read back identically, under a UTF-8 locale", () => {
    // Bytes 1–255 in any order, several values per descriptor: mapfile and
    // the assignments keep every byte whatever the locale (without
    // mapfile's `-d ''`, splitting at newlines, this went red: seen, restored).
    const bytes = fc.uint8Array({ minLength: 1, maxLength: 600, min: 1, max: 255 });
    fc.assert(
      fc.property(fc.array(bytes, { minLength: 1, maxLength: 4 }), (arrays) => {
        const values = arrays.map((a) => Buffer.from(a));
        const { result, expected } = roundTrip(kind, values);
        expect(result.stderr.toString()).toBe("");
        expect(result.status).toBe(0);
        expect(result.stdout.equals(expected)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});

// Breaking the control: without `|| { …; exit 125; }` on the load line, every
// case below but the script loader's ran the command (seen red, restored).
describe("fail closed: any read error stops the step with 125 before the command", () => {
  const marker = () => join(testRoot(), "command-ran");
  const command = (path: string) => `: > ${singleQuote(path)}\necho COMMAND-RAN\n`;
  const reads: SpillRead[] = [
    { name: "RECIPE_VAR_gone", bytes: 10 },
    { name: "OTHER", bytes: 4 },
  ];

  function expectFailClosed(result: SpawnSyncReturns<Buffer>, path: string): void {
    expect(result.status).toBe(125);
    expect(result.stdout.toString()).toBe("");
    expect(result.stderr.toString()).toContain(
      "exactspawn: failed to load the spilled env values\n",
    );
    expect(result.stderr.toString()).not.toContain(SENTINEL);
    expect(existsSync(path)).toBe(false);
  }

  it("the descriptor is not open in the child", () => {
    const path = marker();
    const result = runBash(composeScript(renderPreamble(reads, { values: 3 }), command(path)));
    expectFailClosed(result, path);
  });

  it("the descriptor is a directory (read fails with EISDIR after a successful open)", () => {
    // The old `{ read … || :; } < file` ran the command here with an empty value.
    const path = marker();
    const dir = openSync(testRoot(), "r");
    try {
      const result = runBash(composeScript(renderPreamble(reads, { values: 3 }), command(path)), [
        dir,
      ]);
      expectFailClosed(result, path);
    } finally {
      closeSync(dir);
    }
  });

  it("the descriptor is write-only (read fails with EBADF)", () => {
    const path = marker();
    const fd = openSync(join(testRoot(), "w"), "w");
    try {
      const result = runBash(composeScript(renderPreamble(reads, { values: 3 }), command(path)), [
        fd,
      ]);
      expectFailClosed(result, path);
    } finally {
      closeSync(fd);
    }
  });

  const full = spillValuesBytes([SENTINEL.slice(0, 10), "OTHR"]);
  it.each(
    KINDS.flatMap((kind) => [
      [kind, "ends inside the last value", full.subarray(0, 13)],
      [kind, "lacks the end mark", full.subarray(0, 16)],
      [kind, "holds a NUL inside a value", spillValuesBytes([SENTINEL.slice(0, 5), "\0OTHR"])],
      [kind, "holds one value too many", Buffer.concat([Buffer.from("extra\0"), full])],
    ]),
  )("the %s descriptor %s", (kind, _how, bytes) => {
    const path = marker();
    const descriptor = open(kind as DescriptorKind, bytes as Buffer);
    try {
      const result = runBash(composeScript(renderPreamble(reads, { values: 3 }), command(path)), [
        descriptor.fd,
      ]);
      expectFailClosed(result, path);
    } finally {
      descriptor.close();
    }
  });

  it.each(KINDS)(
    "the %s descriptor as written reads back (the cases above differ only in their bytes)",
    (kind) => {
      const descriptor = open(kind, full);
      try {
        const result = runBash(
          composeScript(
            renderPreamble(reads, { values: 3 }),
            'printf "%s|%s" "$RECIPE_VAR_gone" "$OTHER"',
          ),
          [descriptor.fd],
        );
        expect(result.stdout.toString()).toBe(`${SENTINEL.slice(0, 10)}|OTHR`);
      } finally {
        descriptor.close();
      }
    },
  );

  it("the script descriptor is missing or a directory: 125, nothing of the script runs", () => {
    const path = marker();
    const long = `${command(path)}: '${"p".repeat(INLINE_SCRIPT_MAX_BYTES)}'\n`;
    const inv = bashInvocation({ bash: BASH, command: long });
    expect(inv.mode).toBe("file");
    const missing = spawnSync(BASH, inv.argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    expect(missing.status).toBe(125);
    expect(missing.stderr.toString()).toBe("exactspawn: failed to load the step script\n");
    const dir = openSync(testRoot(), "r");
    try {
      const result = spawnSync(BASH, inv.argv.slice(1), { stdio: ["ignore", "pipe", "pipe", dir] });
      expect(result.status).toBe(125);
    } finally {
      closeSync(dir);
    }
    expect(existsSync(path)).toBe(false);
  });
});

describe("bash script and the planner's argv size", () => {
  it("keeps the script byte-identical to the command when nothing spilled", () => {
    const command = "#!/bin/sh\necho $LINENO\n";
    expect(composeScript("", command)).toBe(command);
    const inv = bashInvocation({ bash: BASH, command });
    expect(inv).toMatchObject({ mode: "inline", argv: [BASH, "-c", command] });
    expect(runBash(inv.script).stdout.toString()).toBe("2\n");
  });

  it("applies the 64 KiB rule to the values preamble + command together", () => {
    const spills = [{ name: "A", bytes: 5 }];
    const preamble = renderPreamble(spills, { values: 3 });
    const fits = "x".repeat(INLINE_SCRIPT_MAX_BYTES - Buffer.byteLength(preamble));
    expect(bashInvocation({ bash: BASH, spills, command: fits }).mode).toBe("inline");
    const file = bashInvocation({ bash: BASH, spills, command: `${fits}x` });
    expect(file).toMatchObject({ mode: "file", valuesFd: 3, scriptFd: 4 });
    expect(file.argv).toEqual([
      BASH,
      "-c",
      "[ -f /proc/self/fd/4 ] && [ -r /proc/self/fd/4 ] || " +
        "{ printf 'exactspawn: failed to load the step script\\n' >&2; exit 125; }; . /proc/self/fd/4",
    ]);
    expect(file.script).toBe(`exec 4<&-\n${preamble}${fits}x`);
    expect(
      bashInvocation({ bash: BASH, command: `${fits}${preamble}x`, firstSlot: 5 }),
    ).toMatchObject({ mode: "file", valuesFd: undefined, scriptFd: 5 });
  });

  const commands: [string, string][] = [
    ["small command", 'printf %s "$RECIPE_VAR_a$RECIPE_VAR_A" | wc -c\n'],
    ["command near 64 KiB", `: ${"c".repeat(INLINE_SCRIPT_MAX_BYTES - 2000)}\necho ok\n`],
    ["command over 64 KiB", `: ${"c".repeat(INLINE_SCRIPT_MAX_BYTES + 10)}\necho ok\n`],
  ];
  it.each(commands)(
    "predicts the exact argv size and the descriptors really work: %s",
    (_l, command) => {
      const values = new Map<string, string>();
      for (let i = 0; i < 12; i++)
        values.set(`RECIPE_VAR_${String.fromCharCode(97 + i)}`, "é".repeat(70_000 + i));
      // Two aliases with the same values as earlier names: copied, not read again.
      values.set("RECIPE_VAR_A", values.get("RECIPE_VAR_a")!);
      values.set("RECIPE_VAR_B", values.get("RECIPE_VAR_b")!);
      const env = new Map([["PATH", "/usr/bin:/bin"], ...values]);
      const value = (name: string) => env.get(name) ?? "";
      const argvBytes = bashArgvSizer({ bash: BASH, command, value });
      const limits = { execLimit: 6 * 1024 * 1024, maxArgStrlen: 131_072 };
      const plan = planSpill({
        env,
        stepNames: new Set(values.keys()),
        file: BASH,
        argvBytes,
        limits,
        perValueCap: PER_VALUE_ENV_CAP,
        log: captureLog().logger,
      });
      expect(plan.spilled.length).toBe(14);
      const spills = spillReads(
        plan.spilled.map(({ name }) => name),
        value,
      );
      expect(spills.filter((s) => s.sameAs !== undefined)).toHaveLength(2);
      const inv = bashInvocation({ bash: BASH, spills, command });
      const measured = execFits(BASH, inv.argv, plan.inline, limits);
      expect(plan.argv.bytes).toBe(measured.argvBytes);
      expect(plan.argv.argc).toBe(inv.argv.length);
      expect(plan.footprint).toBe(measured.footprint);
      const kind = KINDS[0]!;
      const data = open(
        kind,
        spillValuesBytes(
          spills.filter((s) => s.sameAs === undefined).map(({ name }) => value(name)),
        ),
      );
      const script = inv.scriptFd === undefined ? undefined : open(kind, Buffer.from(inv.script));
      try {
        const result = spawnSync(inv.argv[0]!, inv.argv.slice(1), {
          env: Object.fromEntries(plan.inline),
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe", data.fd, ...(script === undefined ? [] : [script.fd])],
        });
        expect(result.stderr).toBe("");
        expect(result.status).toBe(0);
        if (command.startsWith("printf")) expect(result.stdout.trim()).toBe(String(280_000));
      } finally {
        data.close();
        script?.close();
      }
    },
  );

  it("gives the same size whatever order of calls the sizer sees", () => {
    const input = {
      bash: BASH,
      command: "true",
      value: (name: string) => (name === "C" ? "x".repeat(997) : "y".repeat(name.length * 997)),
    };
    const memo = bashArgvSizer(input);
    const growing: string[] = [];
    const lists = [["A"], ["A", "BB"], ["BB"], [], ["A", "BB", "C"], ["C", "A"]];
    for (const list of lists) {
      growing.splice(0, growing.length, ...list);
      expect(memo(growing)).toEqual(bashArgvSizer(input)(list));
      expect(memo(list)).toEqual(bashArgvSizer(input)(list));
    }
  });
});
