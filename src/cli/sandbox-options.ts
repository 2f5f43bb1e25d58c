/**
 * `exactspawn run --sandbox …`: the command line of the `sandbox` option, so
 * `run` can run what `exactspawn sandbox` describes (docs/sandbox.md). A
 * sandbox is asked for with --sandbox or any of its options; its checks are
 * the library's own (normalizeSandbox), reported as usage errors.
 */
import type { ParseArgsConfig } from "node:util";
import type { SandboxOptions, SandboxPart } from "../spawn/sandbox.js";

export const SANDBOX_RUN_OPTIONS = {
  sandbox: { type: "boolean" },
  writable: { type: "string", multiple: true },
  readable: { type: "string", multiple: true },
  executable: { type: "string", multiple: true },
  network: { type: "boolean" },
  "allow-weaker": { type: "string", multiple: true },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

export const SANDBOX_RUN_HELP = `  --sandbox             confine the step (and all it starts) as "exactspawn sandbox" describes:
                        writes only beneath --writable, no network, the syscall filter
  --writable DIR        a directory the step may write beneath (implies --sandbox); repeatable
  --readable DIR        read only beneath DIR (default: read anywhere); repeatable
  --executable DIR      execute only files beneath DIR (default: the system's program
                        directories); repeatable
  --network             let the sandboxed step open sockets (TCP, UDP, ...)
  --allow-weaker PART   run even where this kernel cannot enforce PART (filesystem, truncate,
                        ioctl, network, syscalls); repeatable`;

type SandboxValues = {
  sandbox?: boolean;
  writable?: string[];
  readable?: string[];
  executable?: string[];
  network?: boolean;
  "allow-weaker"?: string[];
};

/** The sandbox the values ask for, or undefined when none of its options was given. */
export function sandboxFromValues(values: SandboxValues): SandboxOptions | undefined {
  const asked =
    values.sandbox === true ||
    values.writable !== undefined ||
    values.readable !== undefined ||
    values.executable !== undefined ||
    values.network !== undefined ||
    values["allow-weaker"] !== undefined;
  if (!asked) return undefined;
  return {
    writable: values.writable ?? [],
    ...(values.readable === undefined ? {} : { readable: values.readable }),
    ...(values.executable === undefined ? {} : { executable: values.executable }),
    ...(values.network === undefined ? {} : { network: values.network }),
    ...(values["allow-weaker"] === undefined
      ? {}
      : { allowWeaker: values["allow-weaker"] as SandboxPart[] }),
  };
}
