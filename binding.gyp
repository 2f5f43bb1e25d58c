{
  "targets": [
    {
      "target_name": "exactspawn",
      "sources": [
        "native/binding.cc",
        "native/probe_binding.cc",
        "native/spawn_binding.cc",
        "native/pipe_binding.cc",
        "native/memfd_binding.cc",
        "native/child_watch.cc",
        "native/system_error.cc",
        "native/core/probe.cc",
        "native/core/spawn_process.cc",
        "native/core/child_exit.cc",
        "native/core/pipe.cc",
        "native/core/memfd.cc",
        "native/core/orphan_reaper.cc",
        "native/core/signal_names.cc"
      ],
      "dependencies": [
        "<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "EXACTSPAWN_SOURCE_STAMP=<!(node scripts/native-stamp.mjs)"
      ],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Werror=return-type"],
      "cflags": ["-Wall", "-Wextra"]
    }
  ]
}
