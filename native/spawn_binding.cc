// spawn_binding.cc — marshalling only. Reads one options object
//   { file: string, argv: (string|Buffer)[], envp: (string|Buffer)[],
//     cwd?: string|null, stdio: int[] (>= 3; -1 = /dev/null),
//     setsid?: boolean, setpgroup?: boolean, onExit: function }
// checks every type (TypeError, never a silent coercion; strings must not
// contain NUL), calls spawn_process() and hands the pid to WatchChild().
// A failed posix_spawn(3) is thrown as a system error with syscall
// "posix_spawn" and path = file. No C++ exception crosses into Node.
#include "spawn_binding.h"

#include <climits>
#include <cmath>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "child_watch.h"
#include "core/spawn_process.h"
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
    if (!(fd >= -1 && fd <= INT_MAX) || fd != std::trunc(fd)) {
      ThrowTypeError(env, "spawn: stdio entries must be fds (integers >= -1)");
    }
    fds.push_back(static_cast<int>(fd));
  }
  return fds;
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
  bool setsid = OptionalBool(env, options, "setsid");
  bool setpgroup = OptionalBool(env, options, "setpgroup");

  Napi::Value on_exit = options.Get("onExit");
  if (!on_exit.IsFunction()) ThrowTypeError(env, "spawn: onExit must be a function");

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
  return WatchChild(env, pid, on_exit.As<Napi::Function>());
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
