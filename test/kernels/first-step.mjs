// A fresh host's first contained step, before any limit was asked in this process (issue 36.1).
import { spawn } from "../../dist/index.js";

const result = await spawn("/bin/sh", ["-c", "head -c 4000000 /dev/zero | tail -c 1 >/dev/null"], {
  contain: true,
});
console.log(JSON.stringify({ memoryPeakBytes: result.resourceUsage.memoryPeakBytes ?? null }));
