import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { planSpill } from "../../src/env/spill-plan.js";
import { InvalidEnvError } from "../../src/errors.js";
import { execFits, PER_VALUE_ENV_CAP } from "../../src/limits.js";
import {
  bashArgvSizer,
  bashInvocation,
  composeScript,
  INLINE_SCRIPT_MAX_BYTES,
} from "../../src/step/bash-script.js";
import { renderPreamble, singleQuote } from "../../src/step/preamble.js";
import { writeScriptFile, writeSpillFiles } from "../../src/step/spill-files.js";
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

function sha256(value: string): string {
  return createHash("sha256").update(Buffer.from(value, "utf8")).digest("hex");
}

function runBash(script: string) {
  return spawnSync(BASH, ["-c", `set -euo pipefail\n${script}`], {
    encoding: "utf8",
    env: { PATH: "/usr/bin:/bin" },
    // A socket on stdin (Node's default pipe) makes Debian's bash source ~/.bashrc.
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 16 * 1024 * 1024,
  });
}

describe("renderPreamble", () => {
  it("renders one fixed line per spill, path single-quoted", () => {
    expect(renderPreamble([{ name: "RECIPE_VAR_r", path: "/t/it's/v0" }])).toBe(
      "{ IFS= read -r -d '' RECIPE_VAR_r || :; } < '/t/it'\\''s/v0' || " +
        "{ printf 'exactspawn: failed to load spilled env value RECIPE_VAR_r\\n' >&2; exit 125; }\n",
    );
    expect(renderPreamble([])).toBe("");
  });

  it.each(["PATH", "BASH_ENV", "my-var", "1X", "IFS", "COMP_WORDS", ""])(
    "refuses the unspillable name %j",
    (name) => {
      expect(() => renderPreamble([{ name, path: "/t/v0" }])).toThrow(InvalidEnvError);
    },
  );

  it("refuses relative paths and NUL", () => {
    expect(() => renderPreamble([{ name: "A", path: "t/v0" }])).toThrow(InvalidEnvError);
    expect(() => renderPreamble([{ name: "A", path: "/t\0/v0" }])).toThrow(InvalidEnvError);
  });

  it("quotes for bash", () => {
    expect(singleQuote("a'b")).toBe("'a'\\''b'");
    expect(runBash(`printf %s ${singleQuote("it's $(x) `y` \\ \n")}`).stdout).toBe(
      "it's $(x) `y` \\ \n",
    );
  });
});

describe("bash round trip through spill files", () => {
  const values: [string, string][] = [
    ["empty", ""],
    ["one byte", "x"],
    ["200 KiB", `${SENTINEL}${"r".repeat(200 * 1024)}`],
    ["1 MiB", `${SENTINEL}${"abcdefgh".repeat(128 * 1024)}`],
    ["quotes", `${SENTINEL} 'single' "double" '\\'' \\" `],
    ["command substitution", `${SENTINEL}$(touch /tmp/pwned) \`id\` $HOME \${X:-y}`],
    ["glob and separators", `${SENTINEL} * ? [a] ; && || | > < & # ~`],
    ["newlines", `${SENTINEL}\nline two\n\nline four`],
    ["trailing newlines", `${SENTINEL}\n\n\n`],
    ["leading and trailing spaces", `   ${SENTINEL} \t `],
    ["non-ASCII", `${SENTINEL} é ü 日本語 🙂 \u00a0`],
    ["backslashes", `${SENTINEL}\\n \\t \\\\ \\`],
    ["option-like", "-n -e --"],
  ];

  it.each(values)("round-trips %s byte for byte", async (_label, value) => {
    const root = testRoot();
    const env = new Map([["RECIPE_VAR_v", value]]);
    const files = await writeSpillFiles({ spilled: [{ name: "RECIPE_VAR_v" }] }, env, {
      tmpdir: root,
    });
    try {
      const script = composeScript(
        renderPreamble(files.files),
        'printf %s "$RECIPE_VAR_v" | sha256sum\n',
      );
      expect(script).not.toContain(SENTINEL);
      const result = runBash(script);
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      expect(result.stdout).toBe(`${sha256(value)}  -\n`);
    } finally {
      await files.remove();
    }
  });

  it("round-trips every value at once, spilled under several names, and does not export them", async () => {
    const env = new Map(values.map(([, value], i) => [`V${i}`, value] as [string, string]));
    const plan = { spilled: [...env.keys()].map((name) => ({ name })) };
    const files = await writeSpillFiles(plan, env, { tmpdir: testRoot() });
    try {
      const command = [...env.keys()]
        .map((name) => `printf %s "$${name}" | sha256sum`)
        .concat(['printenv V0 || echo "not exported"'])
        .join("\n");
      const result = runBash(composeScript(renderPreamble(files.files), command));
      expect(result.status).toBe(0);
      expect(result.stdout).toBe(
        `${values.map(([, v]) => `${sha256(v)}  -\n`).join("")}not exported\n`,
      );
    } finally {
      await files.remove();
    }
  });

  it("works when the spill directory's path contains quotes, spaces and $", async () => {
    const root = testRoot("exactspawn it's a '$dir' ");
    const env = new Map([["RECIPE_VAR_q", `${SENTINEL}'"`]]);
    const files = await writeSpillFiles({ spilled: [{ name: "RECIPE_VAR_q" }] }, env, {
      tmpdir: root,
    });
    try {
      expect(files.dir?.startsWith(root)).toBe(true);
      const result = runBash(
        composeScript(renderPreamble(files.files), 'printf %s "$RECIPE_VAR_q" | sha256sum'),
      );
      expect(result.stdout).toBe(`${sha256(env.get("RECIPE_VAR_q")!)}  -\n`);
    } finally {
      await files.remove();
    }
  });

  it("fails closed: a missing spill file exits 125 before the command, naming only the variable", async () => {
    const env = new Map([
      ["RECIPE_VAR_gone", `${SENTINEL}-gone`],
      ["OTHER", `${SENTINEL}-other`],
    ]);
    const files = await writeSpillFiles(
      { spilled: [{ name: "RECIPE_VAR_gone" }, { name: "OTHER" }] },
      env,
      { tmpdir: testRoot() },
    );
    try {
      unlinkSync(files.files[0]!.path);
      const result = runBash(composeScript(renderPreamble(files.files), "echo COMMAND-RAN\n"));
      expect(result.status).toBe(125);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(
        "exactspawn: failed to load spilled env value RECIPE_VAR_gone\n",
      );
      expect(result.stderr).not.toContain("OTHER");
      expect(result.stderr).not.toContain(SENTINEL);
    } finally {
      await files.remove();
    }
  });
});

describe("bash script and the planner's argv size", () => {
  it("keeps the script byte-identical to the command when nothing spilled", () => {
    const command = "#!/bin/sh\necho $LINENO\n";
    expect(composeScript("", command)).toBe(command);
    const inv = bashInvocation({ bash: BASH, preamble: "", command });
    expect(inv).toMatchObject({ mode: "inline", argv: [BASH, "-c", command] });
    expect(runBash(inv.script.replace("#!/bin/sh\n", "")).stdout).toBe("2\n");
  });

  it("applies the 64 KiB rule to preamble + command together", () => {
    const preamble = renderPreamble([{ name: "A", path: "/t/v0" }]);
    const fits = "x".repeat(INLINE_SCRIPT_MAX_BYTES - Buffer.byteLength(preamble));
    expect(bashInvocation({ bash: BASH, preamble, command: fits }).mode).toBe("inline");
    expect(() => bashInvocation({ bash: BASH, preamble, command: `${fits}x` })).toThrow(TypeError);
    const file = bashInvocation({ bash: BASH, preamble, command: `${fits}x`, scriptFile: "/s" });
    expect(file.argv).toEqual([BASH, "/s"]);
    expect(file.script.startsWith(preamble)).toBe(true);
  });

  const commands: [string, string][] = [
    ["small command", 'printf %s "$RECIPE_VAR_a" | wc -c\n'],
    ["command near 64 KiB", `: ${"c".repeat(INLINE_SCRIPT_MAX_BYTES - 300)}\necho ok\n`],
    ["command over 64 KiB", `: ${"c".repeat(INLINE_SCRIPT_MAX_BYTES + 10)}\necho ok\n`],
  ];
  it.each(commands)(
    "predicts the exact argv size and the files really work: %s",
    async (_l, command) => {
      const root = testRoot("exactspawn q'uote ");
      const values = new Map<string, string>();
      for (let i = 0; i < 12; i++)
        values.set(`RECIPE_VAR_${String.fromCharCode(97 + i)}`, "é".repeat(70_000 + i));
      const env = new Map([["PATH", "/usr/bin:/bin"], ...values]);
      const argvBytes = bashArgvSizer({ bash: BASH, command, tmpdir: root });
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
      expect(plan.spilled.length).toBe(12);
      const files = await writeSpillFiles(plan, env, { tmpdir: root });
      const preamble = renderPreamble(files.files);
      let inv = bashInvocation({ bash: BASH, preamble, command, scriptFile: "" });
      const script =
        inv.mode === "file" ? await writeScriptFile(inv.script, { tmpdir: root }) : undefined;
      try {
        if (script !== undefined)
          inv = bashInvocation({ bash: BASH, preamble, command, scriptFile: script.path });
        const measured = execFits(BASH, inv.argv, plan.inline, limits);
        expect(plan.argv.bytes).toBe(measured.argvBytes);
        expect(plan.argv.argc).toBe(inv.argv.length);
        expect(plan.footprint).toBe(measured.footprint);
        const result = spawnSync(inv.argv[0]!, inv.argv.slice(1), {
          env: Object.fromEntries(plan.inline),
          encoding: "utf8",
        });
        expect(result.status).toBe(0);
        if (command.startsWith("printf")) expect(result.stdout.trim()).toBe(String(140_000));
      } finally {
        await files.remove();
        await script?.remove();
      }
    },
  );

  it("gives the same size whatever order of calls the sizer sees", () => {
    const input = { bash: BASH, command: "true", tmpdir: "/tmp/x'y" };
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
