/**
 * The default export mode as a property (issue 10, item 1): for any context
 * and any set of declared bare names, every exported name is either under the
 * namespace or one of the declared names — decided by string prefix and set
 * membership here, never by the implementation's denylist.
 *
 * Broken once on purpose: with createContextExporter's default mode back at
 * "bare", the property failed on its first case ({ a: "" } exported as A);
 * restored, green.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contextEnvPairs } from "../../src/env/context-export.js";

const key = fc.oneof(
  fc.constantFrom("task_description", "repo_path", "viminit", "config_shell", "rm", "term", "PATH"),
  fc.string({ maxLength: 12 }),
  fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,10}$/),
);
const declared = fc.uniqueArray(
  fc.constantFrom<string>("TASK_DESCRIPTION", "REPO_PATH", "ISSUE_NUMBER"),
);

describe("contextEnvPairs default mode (property)", () => {
  it("exports only namespaced names and the declared bare names", () => {
    fc.assert(
      fc.property(fc.dictionary(key, fc.string()), declared, (context, bare) => {
        const { pairs } = contextEnvPairs(context, { bare, logger: false });
        for (const [name] of pairs) {
          expect(name.startsWith("CTX_") || bare.includes(name), name).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});
