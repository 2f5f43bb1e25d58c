{
  "variables": {
    "static_libc": "<!(node scripts/static-libc.mjs)"
  },
  "targets": [
    {
      "target_name": "exactspawn",
      "sources": [
        "native/binding.cc",
        "native/probe_binding.cc",
        "native/spawn_binding.cc",
        "native/spawn_args.cc",
        "native/spawn_sync_binding.cc",
        "native/pipe_binding.cc",
        "native/memfd_binding.cc",
        "native/child_watch.cc",
        "native/child_handle.cc",
        "native/pipe_capture.cc",
        "native/exit_delivery.cc",
        "native/watch_events.cc",
        "native/host_loop.cc",
        "native/debug_binding.cc",
        "native/helper_binding.cc",
        "native/system_error.cc",
        "native/exec_controls_binding.cc",
        "native/sandbox_binding.cc",
        "native/watchdog_binding.cc",
        "native/deadline_args.cc",
        "native/contain_binding.cc",
        "native/tree_watch.cc",
        "native/leader_watch.cc",
        "native/dumpable_binding.cc",
        "native/core/probe.cc",
        "native/core/errno_names.cc",
        "native/core/glibc_floor.cc",
        "native/core/kernel_support.cc",
        "native/core/spawn_process.cc",
        "native/core/stdio_plan.cc",
        "native/core/run_sync.cc",
        "native/core/child_exit.cc",
        "native/core/pipe.cc",
        "native/core/memfd.cc",
        "native/core/orphan_reaper.cc",
        "native/core/event_set.cc",
        "native/core/reap.cc",
        "native/core/signal_names.cc",
        "native/core/child_path.cc",
        "native/core/helper_file.cc",
        "native/core/child_steps.cc",
        "native/core/helper_plan.cc",
        "native/core/resource_limits.cc",
        "native/core/sandbox.cc",
        "native/core/mount_view.cc",
        "native/core/mount_view_probe.cc",
        "native/core/seccomp_filter.cc",
        "native/core/watchdog.cc",
        "native/core/kill_target.cc",
        "native/core/deadline_keeper.cc",
        "native/core/cgroup.cc",
        "native/core/clone3.cc",
        "native/core/pid_namespace.cc",
        "native/core/dumpable.cc"
      ],
      "dependencies": [
        "<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "EXACTSPAWN_SOURCE_STAMP=<!(node scripts/native-stamp.mjs)"
      ],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Werror=return-type"],
      "cflags": [
        "-Wall",
        "-Wextra",
        "-ffunction-sections",
        "-fdata-sections",
        "-include",
        "<(module_root_dir)/native/core/glibc_floor.h"
      ],
      "ldflags": [
        "-Wl,--version-script=<(module_root_dir)/native/exports.map",
        "-Wl,--gc-sections"
      ]
    },
    {
      "target_name": "exactspawn-helper",
      "type": "executable",
      "sources": [
        "native/helper/main.cc",
        "native/helper/init.cc",
        "native/core/child_steps.cc",
        "native/core/helper_plan.cc",
        "native/core/mount_view.cc",
        "native/core/sandbox.cc",
        "native/core/seccomp_filter.cc"
      ],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Werror=return-type", "-fno-exceptions", "-fno-rtti"],
      "cflags": ["-Wall", "-Wextra", "-ffunction-sections", "-fdata-sections"],
      "ldflags": ["-static", "-Wl,--gc-sections"],
      "conditions": [
        [
          "static_libc==0",
          {
            "type": "none",
            "sources=": [],
            "actions": [
              {
                "action_name": "note_helper_absent",
                "inputs": ["scripts/static-libc.mjs"],
                "outputs": ["<(PRODUCT_DIR)/exactspawn-helper.absent"],
                "action": ["node", "scripts/static-libc.mjs", "--note", "<(PRODUCT_DIR)/exactspawn-helper.absent"]
              }
            ]
          }
        ]
      ]
    }
  ]
}
