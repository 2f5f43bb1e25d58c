// spawn_binding.cc — marshalling only. Reads one options object
//   { file: string, argv: (string|Buffer)[], envp: (string|Buffer)[],
//     cwd?: string|null, stdio: int[] (>= 3; -1 = /dev/null, -2 = a new pipe),
//     capture?: int[] (pipe slots >= 1 the addon reads itself),
//     captureLimit?: number (bytes kept per captured pipe),
//     onOverflow?: function, setsid?: boolean, setpgroup?: boolean,
//     cleanup?: boolean (needs setsid or setpgroup, and startWatchdog() first:
//       the child's group is registered with the watchdog), onExit: function }
// checks every type (TypeError, never a silent coercion; strings must not
// contain NUL), makes the pipes (pipe2(O_CLOEXEC); the child reads slot 0's
// and writes every other slot's), calls spawn_process(), closes the child's
// ends and hands the pid and the captured read ends to WatchChild(). The
// parent's ends of the other pipes come back as `handle.fds` (-1 where a slot
// has none; absent when there are none). A failed posix_spawn(3) is thrown
// as a system error with syscall "posix_spawn" and path = file, after every
// pipe end is closed. No C++ exception crosses into Node.
#include "spawn_binding.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "child_watch.h"
#include "core/pipe.h"
#include "core/spawn_process.h"
#include "core/watchdog.h"
#include "system_error.h"

namespace exactspawn {

namespace {

// NUL-terminated copies of a JS string list, with the char* array execve wants.
struct CStringList {
  std::vector<std::string> storage;
  std::vector<char*> pointers;
};

std::string StringOf(Napi::Env env, Napi::Value value, const std::string& where) {
  std::string out;
  if (value.IsString()) {
    out = value.As<Napi::String>().Utf8Value();
  } else if (value.IsBuffer()) {
    Napi::Buffer<char> buffer = value.As<Napi::Buffer<char>>();
    out.assign(buffer.Data(), buffer.Length());
  } else {
    ThrowTypeError(env, where + " must be a string or Buffer");
  }
  if (std::memchr(out.data(), '\0', out.size()) != nullptr) {
    ThrowTypeError(env, where + " contains a NUL byte");
  }
  return out;
}

void ReadList(Napi::Env env, Napi::Object options, const char* key, bool non_empty,
              CStringList* list) {
  Napi::Value value = options.Get(key);
  if (!value.IsArray()) ThrowTypeError(env, std::string("spawn: ") + key + " must be an array");
  Napi::Array array = value.As<Napi::Array>();
  uint32_t length = array.Length();
  if (non_empty && length == 0) {
    ThrowTypeError(env, std::string("spawn: ") + key + " must not be empty");
  }
  // No reserve(length): a sparse array can claim 2^32 - 1 elements and fail
  // at its first hole, so memory grows only with the elements really read.
  for (uint32_t i = 0; i < length; ++i) {
    list->storage.push_back(
        StringOf(env, array.Get(i), std::string("spawn: ") + key + "[" + std::to_string(i) + "]"));
  }
  list->pointers.reserve(list->storage.size() + 1);
  for (std::string& s : list->storage) list->pointers.push_back(s.data());
  list->pointers.push_back(nullptr);
}

bool OptionalBool(Napi::Env env, Napi::Object options, const char* key) {
  Napi::Value value = options.Get(key);
  if (value.IsUndefined()) return false;
  if (!value.IsBoolean()) ThrowTypeError(env, std::string("spawn: ") + key + " must be a boolean");
  return value.As<Napi::Boolean>().Value();
}

// Linux never allows more open fds than fs.nr_open's ceiling (2^20 by
// default), so a longer stdio list can only fail; refusing it up front also
// keeps a sparse 2^32 - 1 element array from sizing an allocation.
constexpr uint32_t kMaxStdioSlots = 1u << 20;

// A slot value asking for a new pipe.
constexpr int kPipeSlot = -2;

// Closes every fd still >= 0 when it goes out of scope.
struct OwnedFds {
  std::vector<int> fds;
  explicit OwnedFds(size_t count) : fds(count, -1) {}
  ~OwnedFds() {
    for (int fd : fds) {
      if (fd >= 0) close_fd(fd);
    }
  }
  OwnedFds(const OwnedFds&) = delete;
  OwnedFds& operator=(const OwnedFds&) = delete;
};

std::vector<int> ReadStdio(Napi::Env env, Napi::Object options) {
  Napi::Value value = options.Get("stdio");
  if (!value.IsArray()) ThrowTypeError(env, "spawn: stdio must be an array of fds");
  Napi::Array array = value.As<Napi::Array>();
  uint32_t length = array.Length();
  if (length < 3) ThrowTypeError(env, "spawn: stdio must have at least 3 slots");
  if (length > kMaxStdioSlots) {
    ThrowTypeError(env,
                   "spawn: stdio must have at most " + std::to_string(kMaxStdioSlots) + " slots");
  }
  std::vector<int> fds;
  for (uint32_t i = 0; i < length; ++i) {
    Napi::Value slot = array.Get(i);
    if (!slot.IsNumber()) ThrowTypeError(env, "spawn: stdio entries must be integers");
    double fd = slot.As<Napi::Number>().DoubleValue();
    // Range first: converting NaN or an out-of-range double to an integer is undefined.
    if (!(fd >= kPipeSlot && fd <= INT_MAX) || fd != std::trunc(fd)) {
      ThrowTypeError(env, "spawn: stdio entries must be fds, -1 or -2 (integers >= -2)");
    }
    fds.push_back(static_cast<int>(fd));
  }
  return fds;
}

// The captured slots: distinct pipe slots other than stdin.
std::vector<int> ReadCapture(Napi::Env env, Napi::Object options, const std::vector<int>& stdio) {
  std::vector<int> slots;
  Napi::Value value = options.Get("capture");
  if (value.IsUndefined()) return slots;
  if (!value.IsArray()) ThrowTypeError(env, "spawn: capture must be an array of slots");
  Napi::Array array = value.As<Napi::Array>();
  uint32_t length = array.Length();
  if (length > stdio.size()) ThrowTypeError(env, "spawn: capture has more slots than stdio");
  for (uint32_t i = 0; i < length; ++i) {
    Napi::Value slot = array.Get(i);
    double number = slot.IsNumber() ? slot.As<Napi::Number>().DoubleValue() : -1;
    if (!(number >= 1 && number < static_cast<double>(stdio.size())) ||
        number != std::trunc(number) || stdio[static_cast<size_t>(number)] != kPipeSlot) {
      ThrowTypeError(env, "spawn: capture entries must be pipe slots other than 0");
    }
    int index = static_cast<int>(number);
    for (int seen : slots) {
      if (seen == index) ThrowTypeError(env, "spawn: capture repeats a slot");
    }
    slots.push_back(index);
  }
  return slots;
}

size_t ReadCaptureLimit(Napi::Env env, Napi::Object options) {
  Napi::Value value = options.Get("captureLimit");
  if (!value.IsNumber()) ThrowTypeError(env, "spawn: captureLimit must be a number");
  double limit = value.As<Napi::Number>().DoubleValue();
  if (!(limit > 0)) ThrowTypeError(env, "spawn: captureLimit must be > 0");
  // Fractional limits keep whole bytes; anything beyond memory is unlimited.
  if (limit >= 9007199254740992.0) return SIZE_MAX;
  return static_cast<size_t>(std::floor(limit));
}

Napi::Value SpawnChecked(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsObject()) {
    ThrowTypeError(env, "spawn: expected exactly one options object");
  }
  Napi::Object options = info[0].As<Napi::Object>();

  Napi::Value file_value = options.Get("file");
  if (!file_value.IsString()) ThrowTypeError(env, "spawn: file must be a string");
  std::string file = StringOf(env, file_value, "spawn: file");
  if (file.empty() || file[0] != '/') ThrowTypeError(env, "spawn: file must be an absolute path");

  CStringList argv;
  CStringList envp;
  ReadList(env, options, "argv", true, &argv);
  ReadList(env, options, "envp", false, &envp);

  std::string cwd;
  bool has_cwd = false;
  Napi::Value cwd_value = options.Get("cwd");
  if (!cwd_value.IsUndefined() && !cwd_value.IsNull()) {
    if (!cwd_value.IsString()) ThrowTypeError(env, "spawn: cwd must be a string");
    cwd = StringOf(env, cwd_value, "spawn: cwd");
    has_cwd = true;
  }

  std::vector<int> stdio = ReadStdio(env, options);
  CaptureRequest capture;
  capture.slots = ReadCapture(env, options, stdio);
  if (!capture.slots.empty()) {
    capture.limit = ReadCaptureLimit(env, options);
    Napi::Value on_overflow = options.Get("onOverflow");
    if (!on_overflow.IsFunction()) ThrowTypeError(env, "spawn: onOverflow must be a function");
    capture.on_overflow = on_overflow;
  }
  bool setsid = OptionalBool(env, options, "setsid");
  bool setpgroup = OptionalBool(env, options, "setpgroup");
  bool cleanup = OptionalBool(env, options, "cleanup");
  if (cleanup && !setsid && !setpgroup) {
    ThrowTypeError(env, "spawn: cleanup needs setsid or setpgroup (a group of the child's own)");
  }
  if (cleanup && !watchdog_configured()) {
    ThrowTypeError(env, "spawn: cleanup needs startWatchdog() first");
  }

  Napi::Value on_exit = options.Get("onExit");
  if (!on_exit.IsFunction()) ThrowTypeError(env, "spawn: onExit must be a function");

  // Every check is done: make the pipes. Both owners close what they still
  // hold on every way out (the child's ends always, the parent's on failure).
  OwnedFds parent_ends(stdio.size());
  OwnedFds child_ends(stdio.size());
  bool uncaptured_pipe = false;
  for (size_t i = 0; i < stdio.size(); ++i) {
    if (stdio[i] != kPipeSlot) continue;
    int fds[2];
    int err = make_pipe(fds);
    if (err < 0) throw SystemError(env, err, "pipe2");
    parent_ends.fds[i] = i == 0 ? fds[1] : fds[0];
    child_ends.fds[i] = i == 0 ? fds[0] : fds[1];
    stdio[i] = child_ends.fds[i];
    bool captured = false;
    for (int slot : capture.slots) captured = captured || static_cast<size_t>(slot) == i;
    uncaptured_pipe = uncaptured_pipe || !captured;
  }

  SpawnRequest request;
  request.file = file.c_str();
  request.argv = argv.pointers.data();
  request.envp = envp.pointers.data();
  request.cwd = has_cwd ? cwd.c_str() : nullptr;
  request.stdio = stdio.data();
  request.stdio_count = stdio.size();
  request.new_session = setsid;
  request.new_process_group = setpgroup;

  pid_t pid = 0;
  int err = spawn_process(request, &pid);
  if (err < 0) throw SystemError(env, err, "posix_spawn", &file);
  Napi::Object handle =
      WatchChild(env, pid, on_exit.As<Napi::Function>(), capture, &parent_ends.fds, cleanup);
  if (uncaptured_pipe) {
    Napi::Array fds = Napi::Array::New(env, stdio.size());
    for (size_t i = 0; i < stdio.size(); ++i) {
      fds.Set(static_cast<uint32_t>(i), Napi::Number::New(env, parent_ends.fds[i]));
    }
    handle.Set("fds", fds);
    for (int& fd : parent_ends.fds) fd = -1;  // JavaScript owns them now
  }
  return handle;
}

}  // namespace

Napi::Value Spawn(const Napi::CallbackInfo& info) {
  try {
    return SpawnChecked(info);
  } catch (const Napi::Error&) {
    throw;  // node-addon-api turns it into a pending JS exception
  } catch (const std::exception& e) {
    throw Napi::Error::New(info.Env(), std::string("exactspawn: ") + e.what());
  } catch (...) {
    throw Napi::Error::New(info.Env(), "exactspawn: unexpected native failure");
  }
}

}  // namespace exactspawn
