// The containment mutants that only a kernel with the controllers delegated can kill (on the
// build machine cgroup2 has none, so no limit is ever applied and these survive the vitest
// suite): each is one change (or a few that only go together) to the sources, the checks of
// test/kernels/run.mjs that must go red, and the kernels they run on.
// `npm run test:kernels -- --mutant NAME[,NAME…]` (or `--mutants` for all) applies each to a
// scratch copy of the tree, builds it, boots the kernels and expects a red check.

/** name → { why, edits: [{ file, search, replace }], checks, kernels }. */
export const KERNEL_MUTANTS = {
  "controllers-never-enabled": {
    why: "no controller is enabled in the host's sub-tree: the limits' files do not exist in the step's cgroup",
    edits: [
      {
        file: "native/core/cgroup.cc",
        search:
          'if (lists(available, controller)) write_file(control, (std::string("+") + controller).c_str());',
        replace: "(void)control;",
      },
      {
        file: "native/core/cgroup.cc",
        search: '    std::string enable = std::string("+") + limits[i].controller;\n',
        replace:
          '    std::string enable = std::string("+") + limits[i].controller;\n    continue;\n',
      },
    ],
    checks: ["pids", "oom-leader", "cpu"],
    kernels: ["6.1"],
  },
  "controllers-only-for-limits": {
    why: "the sub-tree enables only what a step's limits need (issue 36.1's bug): the first plain step has no memory.peak",
    edits: [
      {
        file: "native/core/cgroup.cc",
        search:
          'if (lists(available, controller)) write_file(control, (std::string("+") + controller).c_str());',
        replace: "(void)control;",
      },
    ],
    checks: ["first-peak"],
    kernels: ["6.1"],
  },
  "controllers-list-empty": {
    why: "TypeScript hands the addon no controller to enable in the sub-tree (CONTROLLERS, the one list): the first plain step has no memory.peak",
    edits: [
      {
        file: "src/spawn/contain.ts",
        search: "  ...new Set(Object.values(LIMIT_FILES).map(({ controller }) => controller)),\n",
        replace: "",
      },
    ],
    checks: ["first-peak"],
    kernels: ["6.1"],
  },
  "cpu-max-floor": {
    why: "cpuMax below 1 ms per 100 ms period is written as is: the kernel refuses the quota (EINVAL)",
    edits: [
      {
        file: "src/spawn/contain.ts",
        search: "const quota = Math.max(1000, Math.round(value * CPU_PERIOD));",
        replace: "const quota = Math.round(value * CPU_PERIOD);",
      },
    ],
    checks: ["cpu-floor"],
    kernels: ["6.1"],
  },
  "oom-as-signal": {
    why: 'an OOM kill is reported as the bare SIGKILL (or the leader\'s exit) instead of failure "oom"',
    edits: [
      {
        file: "src/spawn/deadline-plan.ts",
        search: 'if ((events?.oomKill ?? 0) > 0) return "oom";',
        replace: "",
      },
    ],
    checks: ["oom-leader", "oom-child"],
    kernels: ["6.1"],
  },
  "cgroup-mount-any-root": {
    why: "the first cgroup2 mount is taken whatever its root: a bind mount of a sub-cgroup maps the host's cgroup wrong",
    edits: [
      {
        file: "native/core/cgroup.cc",
        search: 'if (fields.size() == 5 && fields[3] == "/")',
        replace: "if (fields.size() == 5)",
      },
    ],
    checks: ["mount-root"],
    kernels: ["6.1"],
  },
  "freeze-fallback-sigterm": {
    why: "the freeze fallback (no cgroup.kill, before 5.14) sends SIGTERM: a process that ignores it survives the step",
    edits: [
      {
        file: "native/core/cgroup.cc",
        search: "kill(static_cast<pid_t>(pid), SIGKILL);",
        replace: "kill(static_cast<pid_t>(pid), SIGTERM);",
      },
    ],
    checks: ["tree-kill"],
    kernels: ["5.10"],
  },
  "clone-not-into-cgroup": {
    why: "the child is cloned into the host's cgroup and moves itself (no CLONE_INTO_CGROUP)",
    edits: [
      {
        file: "native/core/child_path.cc",
        search: "args->in_cgroup = true;",
        replace: "args->in_cgroup = true;\n  clone.flags &= ~kCloneIntoCgroup;",
      },
    ],
    checks: ["clone3"],
    kernels: ["6.1"],
  },
};
