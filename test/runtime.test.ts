import { describe, expect, it } from "vitest";
import { InvalidEnvError } from "../src/errors.js";
import { createRuntime } from "../src/runtime.js";
import { captureLog } from "./helpers/capture-log.js";

const SENTINEL = "SENTINEL-7f3a";
const parentEnv = {
  PATH: "/usr/bin",
  HOME: "/home/u",
  LANG: "C.UTF-8",
  HOST_SERVICE_TOKEN: SENTINEL,
  ANTHROPIC_API_KEY: SENTINEL,
  EXACTSPAWN_AUTH_XAI_API_KEY: SENTINEL,
  EDITOR: "vi",
};

describe("createRuntime: snapshots", () => {
  it("later changes to the caller's objects have no effect", () => {
    const parent: Record<string, string> = { ...parentEnv };
    const overlay: Record<string, string> = { ADAPTER_EXECUTABLE: "/opt/agent" };
    const block = ["HOST_SERVICE_TOKEN"];
    const runtime = createRuntime({
      parentEnv: parent,
      overlay,
      block,
      logger: captureLog().logger,
    });
    parent["PATH"] = "/changed";
    parent["NEW"] = "1";
    overlay["ADAPTER_EXECUTABLE"] = "/changed";
    block.pop();
    const { env } = runtime.buildEnv();
    expect(env.get("PATH")).toBe("/usr/bin");
    expect(env.has("NEW")).toBe(false);
    expect(env.get("ADAPTER_EXECUTABLE")).toBe("/opt/agent");
    expect(env.has("HOST_SERVICE_TOKEN")).toBe(false);
    expect(Object.isFrozen(runtime.config)).toBe(true);
    expect(Object.isFrozen(runtime.config.block)).toBe(true);
  });

  it("defaults the parent to process.env, read once", () => {
    const key = "EXACTSPAWN_TEST_ONLY_VARIABLE";
    process.env[key] = "before";
    try {
      const runtime = createRuntime({ inherit: "all", logger: captureLog().logger });
      process.env[key] = "after";
      expect(runtime.buildEnv().env.get(key)).toBe("before");
    } finally {
      delete process.env[key];
    }
  });
});

describe("createRuntime: buildEnv", () => {
  it("builds the env without per-call layers once: the same frozen result, a fresh one with any per-call layer", () => {
    const runtime = createRuntime({ parentEnv, logger: captureLog().logger });
    const fixed = runtime.buildEnv();
    expect(runtime.buildEnv({})).toBe(fixed);
    expect(runtime.buildEnv({ stepValues: new Map() })).toBe(fixed);
    expect(() => (fixed.env as Map<string, string>).set("PATH", "/x")).toThrow(TypeError);
    expect(() => (fixed.origin as Map<string, string>).delete("PATH")).toThrow(TypeError);
    expect(fixed.env.get("PATH")).toBe("/usr/bin");
    const withValue = runtime.buildEnv({ stepValues: new Map([["RECIPE_VAR_a", "1"]]) });
    expect(withValue).not.toBe(fixed);
    expect(withValue.env.get("RECIPE_VAR_a")).toBe("1");
    expect(runtime.buildEnv({ extra: { A: "1" } }).env.get("A")).toBe("1");
    expect(runtime.buildEnv({ correlationId: "r1" }).env.get("EXACTSPAWN_RUN_ID")).toBe("r1");
    expect(runtime.buildEnv({ context: { a: "1" } }).env.get("CTX_A")).toBe("1");
    // None of those changed the fixed one.
    expect(runtime.buildEnv()).toBe(fixed);
    expect(
      [...fixed.env.keys()].some((name) => /^(A|RECIPE_VAR_a|CTX_A|EXACTSPAWN_RUN_ID)$/.test(name)),
    ).toBe(false);
  });

  it("reads the spill directory once, like the rest of the parent environment", () => {
    const saved = process.env["TMPDIR"];
    const runtime = createRuntime({ parentEnv, logger: captureLog().logger });
    try {
      const first = runtime.planBash("true").tmpdir;
      process.env["TMPDIR"] = "/elsewhere";
      expect(runtime.planBash("true").tmpdir).toBe(first);
    } finally {
      if (saved === undefined) delete process.env["TMPDIR"];
      else process.env["TMPDIR"] = saved;
    }
  });

  it("exports context bare under the recipe-runner-compat preset, skips the rest, and keeps host values on top", () => {
    const log = captureLog();
    const runtime = createRuntime({
      preset: "recipe-runner-compat",
      parentEnv,
      hostEnv: { EXACTSPAWN_NONINTERACTIVE: "1", PAGER: "cat" },
      correlationId: "run-42",
      logger: log.logger,
    });
    const out = runtime.buildEnv({
      context: {
        task_description: "Add validation",
        repo_path: ".",
        "issue title": SENTINEL,
        ld_preload: SENTINEL,
        pager: SENTINEL,
        exactspawn_run_id: SENTINEL,
      },
    });
    expect(out.env.get("TASK_DESCRIPTION")).toBe("Add validation");
    expect(out.env.get("REPO_PATH")).toBe(".");
    expect(out.env.get("PAGER")).toBe("cat");
    expect(out.env.get("EXACTSPAWN_RUN_ID")).toBe("run-42");
    expect(out.env.has("LD_PRELOAD")).toBe(false);
    expect(out.origin.get("TASK_DESCRIPTION")).toBe("context");
    expect(out.origin.get("EXACTSPAWN_RUN_ID")).toBe("correlation");
    expect(out.skipped.map((s) => [s.name, s.reason])).toEqual([
      ["EXACTSPAWN_RUN_ID", "reserved_name"],
      ["ISSUE TITLE", "invalid_identifier"],
      ["LD_PRELOAD", "reserved_name"],
      ["PAGER", "reserved_name"],
    ]);
    // buildEnv reports as data only; exportContext (asked for the export) logs each skip.
    expect(log.events()).toEqual([]);
    runtime.exportContext({ "issue title": SENTINEL, ld_preload: SENTINEL });
    expect(log.events().map((e) => e["reason"])).toEqual(["invalid_identifier", "reserved_name"]);
    for (const line of log.lines) expect(line).not.toContain(SENTINEL);
  });

  it("reports which final names came from step values", () => {
    const runtime = createRuntime({ parentEnv, logger: captureLog().logger });
    const out = runtime.buildEnv({
      stepValues: new Map([
        ["RECIPE_VAR_result", "ok"],
        ["RECIPE_VAR_RESULT", "ok"],
      ]),
      extra: { RECIPE_VAR_RESULT: "from extra" },
    });
    expect(out.stepValueNames).toEqual(["RECIPE_VAR_result"]);
    expect(out.origin.get("RECIPE_VAR_RESULT")).toBe("extra");
    expect(() => runtime.buildEnv({ stepValues: { A: "1" } as never })).toThrow(TypeError);
  });

  it("seed precedence: grants, then overlay, then session, then inherited", () => {
    const runtime = createRuntime({
      parentEnv: { ...parentEnv, MODEL: "inherited", XAI_API_KEY: "parent-key" },
      sessionEnv: { MODEL: "session", XAI_API_KEY: "session-key" },
      overlay: { MODEL: "overlay", XAI_API_KEY: "overlay-key" },
      grants: ["XAI_API_KEY"],
      logger: captureLog().logger,
    });
    const out = runtime.buildEnv();
    expect(out.env.get("MODEL")).toBe("overlay");
    expect(out.env.get("XAI_API_KEY")).toBe("parent-key");
    expect(out.origin.get("XAI_API_KEY")).toBe("grant");
  });

  it("allow and block lists, essentials and grants", () => {
    const runtime = createRuntime({
      parentEnv,
      allow: ["ANTHROPIC_API_KEY", "EDITOR"],
      block: ["EDITOR"],
      logger: captureLog().logger,
    });
    const { env, dropped } = runtime.buildEnv();
    expect([...env.keys()]).toEqual([
      "ANTHROPIC_API_KEY",
      "EXACTSPAWN_AUTH_XAI_API_KEY",
      "HOME",
      "LANG",
      "PATH",
    ]);
    expect(dropped.map((d) => [d.name, d.reason])).toEqual([
      ["HOST_SERVICE_TOKEN", "not_allowed"],
      ["EDITOR", "blocked"],
    ]);
  });

  it("by default no untrusted key sets an undeclared bare name; declared ones are set bare", () => {
    // Broken once on purpose: with the runtime's default contextMode back at
    // "bare", this test went red (TASK_DESCRIPTION and NOTES set bare); restored, green.
    const context = { task_description: "t", notes: "n", viminit: "x" };
    const plain = createRuntime({ parentEnv, logger: captureLog().logger });
    const out = plain.buildEnv({ context });
    expect(out.env.get("CTX_TASK_DESCRIPTION")).toBe("t");
    expect(out.env.get("CTX_NOTES")).toBe("n");
    expect(out.env.get("CTX_VIMINIT")).toBe("x");
    expect(out.env.has("TASK_DESCRIPTION")).toBe(false);
    expect(out.env.has("VIMINIT")).toBe(false);
    expect(plain.config.contextMode).toBe("namespace");
    expect(plain.config.bareNames).toEqual([]);
    const declared = createRuntime({
      parentEnv,
      bareNames: ["task_description", "REPO_PATH"],
      logger: captureLog().logger,
    });
    const mixed = declared.buildEnv({ context: { ...context, repo_path: "/r" } });
    expect(mixed.env.get("TASK_DESCRIPTION")).toBe("t");
    expect(mixed.env.get("REPO_PATH")).toBe("/r");
    expect(mixed.env.get("CTX_NOTES")).toBe("n");
    expect(mixed.env.has("NOTES")).toBe(false);
    expect(declared.config.bareNames).toEqual(["REPO_PATH", "TASK_DESCRIPTION"]);
  });

  it("step-value aliases exist only for declared bare names (or under the compat preset)", () => {
    // Broken once on purpose: with bash-step asking for every alias again, this
    // went red (REPORT and TASK_DESCRIPTION planned, then skipped); restored, green.
    const values = { report: "r", task_description: "t" };
    const plan = (runtime: ReturnType<typeof createRuntime>) => {
      const planned = runtime.planBash("true", { values });
      // Undeclared aliases are never made, so never even reported as skipped.
      expect(planned.variables.filter((v) => v.fate === "skipped")).toEqual([]);
      return [...planned.layered.env.keys()].filter((name) => !(name in parentEnv));
    };
    expect(plan(createRuntime({ parentEnv, logger: captureLog().logger }))).toEqual([
      "RECIPE_VAR_report",
      "RECIPE_VAR_task_description",
    ]);
    expect(
      plan(
        createRuntime({ parentEnv, bareNames: ["TASK_DESCRIPTION"], logger: captureLog().logger }),
      ),
    ).toEqual(["RECIPE_VAR_report", "RECIPE_VAR_task_description", "TASK_DESCRIPTION"]);
    expect(
      plan(
        createRuntime({ parentEnv, preset: "recipe-runner-compat", logger: captureLog().logger }),
      ),
    ).toEqual(["RECIPE_VAR_report", "RECIPE_VAR_task_description", "REPORT", "TASK_DESCRIPTION"]);
    // buildEnv's own stepValues obey the same declaration.
    const direct = createRuntime({ parentEnv, logger: captureLog().logger }).buildEnv({
      stepValues: new Map([
        ["CONFIG_SHELL", "/tmp/x"],
        ["REPORT", "r"],
      ]),
    });
    expect(direct.env.has("REPORT")).toBe(false);
    expect(direct.skipped.map((s) => s.reason)).toEqual(["reserved_name", "undeclared_name"]);
  });

  it("namespace and allowlist context modes", () => {
    const context = { task_description: "t", cflags: "-O2", notes: "n" };
    const ns = createRuntime({ parentEnv, contextMode: "namespace", logger: captureLog().logger });
    expect(ns.buildEnv({ context }).origin.get("CTX_CFLAGS")).toBe("context");
    const allow = createRuntime({
      parentEnv,
      contextMode: "allowlist",
      contextAllow: ["task_description"],
      logger: captureLog().logger,
    });
    const out = allow.buildEnv({ context });
    expect(out.env.get("TASK_DESCRIPTION")).toBe("t");
    expect(out.env.has("NOTES")).toBe(false);
  });

  it("a custom host prefix moves reserved, correlation and grant names", () => {
    const runtime = createRuntime({
      parentEnv: { ...parentEnv, ACME_AUTH_KEY: "k" },
      hostPrefix: "ACME_",
      preset: "recipe-runner-compat",
      allow: [],
      correlationId: "r",
      logger: captureLog().logger,
    });
    const out = runtime.buildEnv({ context: { acme_run_id: "forged", exactspawn_x: "ok" } });
    expect(out.env.get("ACME_RUN_ID")).toBe("r");
    expect(out.env.get("ACME_AUTH_KEY")).toBe("k");
    expect(out.env.get("EXACTSPAWN_X")).toBe("ok");
  });

  it("per-build correlation id overrides the runtime's", () => {
    const runtime = createRuntime({ parentEnv, correlationId: "a", logger: captureLog().logger });
    expect(runtime.buildEnv({ correlationId: "b" }).env.get("EXACTSPAWN_RUN_ID")).toBe("b");
  });

  it("case-insensitive mode folds names across layers", () => {
    const runtime = createRuntime({
      parentEnv: { Path: "C:\\bin" },
      overlay: { PATH: "D:\\bin" },
      caseInsensitive: true,
      logger: captureLog().logger,
    });
    expect(Object.fromEntries(runtime.buildEnv().env)).toEqual({ PATH: "D:\\bin" });
  });
});

describe("createRuntime: validation", () => {
  it.each([
    [{ allow: "PATH" }, TypeError],
    [{ block: [""] }, TypeError],
    [{ grants: [`A=${SENTINEL}`] }, TypeError],
    [{ hostPrefix: "lower_" }, TypeError],
    [{ contextMode: "loose" }, TypeError],
    [{ contextMode: "bare" }, TypeError],
    [{ preset: "compat" }, TypeError],
    [{ preset: "recipe-runner-compat", contextMode: "namespace" }, TypeError],
    [{ bareNames: ["VIMINIT"] }, TypeError],
    [{ bareNames: ["not a name"] }, TypeError],
    [{ bareNames: "TASK" }, TypeError],
    [{ contextMode: "namespace", contextNamespace: "LD_" }, TypeError],
    [{ denylist: { names: [1] } }, TypeError],
    [{ overlay: { A: `${SENTINEL}\0` } }, InvalidEnvError],
    [{ sessionEnv: { "A=B": SENTINEL } }, InvalidEnvError],
    [{ hostEnv: { A: 1 } }, InvalidEnvError],
    [{ parentEnv: { A: `\uD800${SENTINEL}` } }, InvalidEnvError],
    [{ correlationId: `${SENTINEL}\0` }, TypeError],
  ])("rejects %j without echoing a value", (options, type) => {
    let error: unknown;
    try {
      createRuntime({ parentEnv, logger: captureLog().logger, ...(options as object) });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(type);
    expect((error as Error).message).not.toContain(SENTINEL);
  });

  it("bash steps end with the host unless cleanup: false (a boolean, recorded in config)", () => {
    expect(createRuntime({ parentEnv }).config.cleanup).toBe(true);
    expect(createRuntime({ parentEnv, cleanup: false }).config.cleanup).toBe(false);
    expect(() => createRuntime({ parentEnv, cleanup: 1 as unknown as boolean })).toThrow(
      /options\.cleanup must be a boolean/,
    );
  });

  it("rejects an invalid extra at build time", () => {
    const runtime = createRuntime({ parentEnv, logger: captureLog().logger });
    expect(() => runtime.buildEnv({ extra: { A: `${SENTINEL}\0` } })).toThrow(InvalidEnvError);
  });
});
