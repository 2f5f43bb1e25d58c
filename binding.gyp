{
  "targets": [
    {
      "target_name": "exactspawn",
      "sources": [
        "native/binding.cc",
        "native/probe_binding.cc",
        "native/core/probe.cc"
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
