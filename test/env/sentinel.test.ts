/**
 * End-to-end privacy check: every value carries a sentinel marker; no log line
 * (trace level and up) and no error (message, stack, cause chain, inspection)
 * produced anywhere in the spill pipeline may contain it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { boundedEnv } from "../../src/env/bounded-env.js";
import { planSpill } from "../../src/env/spill-plan.js";
import { stepValueEnv } from "../../src/env/step-values.js";
import { PER_VALUE_ENV_CAP } from "../../src/limits.js";
import { setLogger } from "../../src/log.js";
import { bashArgvSizer } from "../../src/step/bash-script.js";
import { writeSpillValues } from "../../src/step/spill-files.js";
import { captureLog } from "../helpers/capture-log.js";

const SENTINEL = "SENTINEL-6c1d9e";
const root = mkdtempSync(join(tmpdir(), "exactspawn-test-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => setLogger(undefined));

function errorText(error: unknown): string {
  const parts = [inspect(error, { depth: 10 })];
  let current: unknown = error;
  while (current instanceof Error) {
    parts.push(current.message, current.stack ?? "", JSON.stringify(current));
    current = current.cause;
  }
  return parts.join("\n");
}

async function caught(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

describe("no value reaches a log line or an error", () => {
  it("holds across step values, planning, spill files and bounded env", async () => {
    const capture = captureLog();
    setLogger(capture.logger);
    const big = `${SENTINEL}${"b".repeat(PER_VALUE_ENV_CAP)}`;
    const steps = stepValueEnv({
      report: big,
      "bad-key": big,
      nested: { inner: `${SENTINEL}-inner` },
      small: `${SENTINEL}-small`,
    });
    const env = new Map([
      ["PATH", "/usr/bin:/bin"],
      ["INHERITED_BIG", `${SENTINEL}${"i".repeat(60_000)}`],
      ["EXACTSPAWN_STATE", `${SENTINEL}${"p".repeat(60_000)}`],
      ...steps.env,
    ]);
    const limits = { execLimit: 100_000, maxArgStrlen: 131_072 };
    const plan = planSpill({
      env,
      stepNames: new Set(steps.env.keys()),
      file: "/bin/bash",
      argvBytes: bashArgvSizer({
        bash: "/bin/bash",
        command: "true",
        value: (n: string) => env.get(n) ?? "",
      }),
      limits,
    });
    expect(plan.spilled.length).toBeGreaterThan(0);
    expect(plan.dropped.map((d) => d.name)).toEqual(["RECIPE_VAR_bad-key"]);

    writeSpillValues(plan, env, { tmpdir: root, kinds: ["tmpfile"] }).descriptor?.close();
    writeFileSync(join(root, "not-a-dir"), "");
    const writeError = await caught(() =>
      writeSpillValues(plan, env, { tmpdir: join(root, "not-a-dir"), kinds: ["tmpfile"] }),
    );

    const bounded = boundedEnv({
      env: plan.inline,
      inheritedNames: new Set(["PATH", "INHERITED_BIG", "EXACTSPAWN_STATE"]),
      file: "/bin/bash",
      argv: plan.argv,
      limits,
    });
    expect(bounded.dropped.map((d) => d.name)).toEqual(["INHERITED_BIG"]);
    const budgetError = await caught(() =>
      boundedEnv({
        env: plan.inline,
        inheritedNames: new Set(["PATH", "INHERITED_BIG", "EXACTSPAWN_STATE"]),
        file: "/bin/bash",
        argv: plan.argv,
        limits: { execLimit: 50_000, maxArgStrlen: 131_072 },
      }),
    );
    const nulError = await caught(() =>
      planSpill({
        env: new Map([["RECIPE_VAR_n", `${SENTINEL}\0${"n".repeat(PER_VALUE_ENV_CAP)}`]]),
        stepNames: new Set(["RECIPE_VAR_n"]),
        file: "/bin/bash",
        argvBytes: () => ({ bytes: 10, argc: 1 }),
        limits,
      }),
    );

    expect(capture.lines.length).toBeGreaterThan(3);
    expect(capture.lines.join("")).not.toContain(SENTINEL);
    for (const error of [writeError, budgetError, nulError]) {
      expect(errorText(error)).not.toContain(SENTINEL);
    }
  });
});
