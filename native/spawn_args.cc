// spawn_args.cc — see spawn_args.h.
#include "spawn_args.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/child_path.h"
#include "core/pipe.h"
#include "core/spawn_process.h"
#include "system_error.h"

namespace exactspawn {

namespace {

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
    if (!(fd >= kPipeSlot && fd <= INT_MAX) || fd != std::trunc(fd)) {
      ThrowTypeError(env, "spawn: stdio entries must be fds, -1 or -2 (integers >= -2)");
    }
    fds.push_back(static_cast<int>(fd));
  }
  return fds;
}

}  // namespace

OwnedFds::~OwnedFds() {
  for (int fd : fds) {
    if (fd >= 0) close_fd(fd);
  }
}

bool OptionalBool(Napi::Env env, Napi::Object options, const char* key) {
  Napi::Value value = options.Get(key);
  if (value.IsUndefined()) return false;
  if (!value.IsBoolean()) ThrowTypeError(env, std::string("spawn: ") + key + " must be a boolean");
  return value.As<Napi::Boolean>().Value();
}

void ReadSpawnArgs(Napi::Env env, Napi::Object options, SpawnArgs* args) {
  Napi::Value file_value = options.Get("file");
  if (!file_value.IsString()) ThrowTypeError(env, "spawn: file must be a string");
  args->file = StringOf(env, file_value, "spawn: file");
  if (args->file.empty() || args->file[0] != '/') {
    ThrowTypeError(env, "spawn: file must be an absolute path");
  }
  ReadList(env, options, "argv", true, &args->argv);
  ReadList(env, options, "envp", false, &args->envp);
  Napi::Value cwd_value = options.Get("cwd");
  if (!cwd_value.IsUndefined() && !cwd_value.IsNull()) {
    if (!cwd_value.IsString()) ThrowTypeError(env, "spawn: cwd must be a string");
    args->cwd = StringOf(env, cwd_value, "spawn: cwd");
    args->has_cwd = true;
  }
  args->stdio = ReadStdio(env, options);
  args->setsid = OptionalBool(env, options, "setsid");
  args->setpgroup = OptionalBool(env, options, "setpgroup");
  args->child_path = ReadExecControls(env, options, &args->controls);
  args->sandboxed = ReadSandbox(env, options, &args->sandbox);
  args->child_path = args->child_path || args->sandboxed;
}

void StartChild(Napi::Env env, SpawnArgs& args, StartedChild* child) {
  if (args.sandboxed) {
    PrepareSandbox(env, &args.sandbox);
    args.controls.controls.sandbox = &args.sandbox.plan;
  }
  // Every check is done: make the pipes. Both owners close what they still
  // hold on every way out (the child's ends always, the parent's on failure).
  std::vector<int> stdio = args.stdio;
  OwnedFds child_ends(stdio.size());
  for (size_t i = 0; i < stdio.size(); ++i) {
    if (stdio[i] != kPipeSlot) continue;
    int fds[2];
    int err = make_pipe(fds);
    if (err < 0) throw SystemError(env, err, "pipe2");
    child->parent_ends.fds[i] = i == 0 ? fds[1] : fds[0];
    child_ends.fds[i] = i == 0 ? fds[0] : fds[1];
    stdio[i] = child_ends.fds[i];
  }

  SpawnRequest request;
  request.file = args.file.c_str();
  request.argv = args.argv.pointers.data();
  request.envp = args.envp.pointers.data();
  request.cwd = args.has_cwd ? args.cwd.c_str() : nullptr;
  request.stdio = stdio.data();
  request.stdio_count = stdio.size();
  request.new_session = args.setsid;
  request.new_process_group = args.setpgroup;

  ChildPathFailure failure;
  int err = args.child_path
                ? spawn_child_path(request, args.controls.controls, &child->pid, &failure)
                : spawn_process(request, &child->pid);
  if (err < 0) {
    const char* syscall = args.child_path ? failure.syscall : "posix_spawn";
    bool chdir = args.child_path && std::strcmp(syscall, "chdir") == 0;
    throw SystemError(env, err, syscall, chdir ? &args.cwd : &args.file);
  }
}

}  // namespace exactspawn
