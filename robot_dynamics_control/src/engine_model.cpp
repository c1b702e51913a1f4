#include "robot_dynamics_control/engine_model.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ament_index_cpp/get_package_prefix.hpp"

extern char ** environ;

namespace robot_dynamics_control
{
namespace
{

/// The converter: $ROBOT_DYNAMICS_CLI, robot_dynamics' lib/robot_dynamics/robot-dynamics (where
/// ament_python installs console scripts), else `robot-dynamics` looked up on PATH.
std::string converter_path()
{
  if (const char * env = std::getenv("ROBOT_DYNAMICS_CLI"); env != nullptr && *env != '\0') {
    return env;
  }
  try {
    const std::string path =
      ament_index_cpp::get_package_prefix("robot_dynamics") + "/lib/robot_dynamics/robot-dynamics";
    if (::access(path.c_str(), X_OK) == 0) {
      return path;
    }
  } catch (const std::exception &) {
    // not in the ament index: PATH below
  }
  return "robot-dynamics";
}

/// A temporary file holding `text`, removed when this goes out of scope.
class TempFile
{
public:
  TempFile(const std::string & text, const char * suffix)
  {
    std::string pattern =
      (std::filesystem::temp_directory_path() / "robot_dynamics_control-XXXXXX").string() + suffix;
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    const int fd = ::mkstemps(name.data(), static_cast<int>(std::strlen(suffix)));
    if (fd < 0) {
      throw std::runtime_error(
        std::string("cannot create a temporary file for the robot description: ") + std::strerror(errno));
    }
    path_.assign(name.data());
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t k = ::write(fd, text.data() + done, text.size() - done);
      if (k < 0 && errno == EINTR) {
        continue;
      }
      if (k <= 0) {
        const int err = errno;
        ::close(fd);
        ::unlink(path_.c_str());
        throw std::runtime_error(
          "cannot write the robot description to " + path_ + ": " + std::strerror(err));
      }
      done += static_cast<size_t>(k);
    }
    ::close(fd);
  }
  ~TempFile() { ::unlink(path_.c_str()); }
  TempFile(const TempFile &) = delete;
  TempFile & operator=(const TempFile &) = delete;
  const std::string & path() const { return path_; }

private:
  std::string path_;
};

struct ProcessResult
{
  int status = -1;  // exit code; -1: killed by a signal
  std::string out, err;
};

/// Runs argv[0] (looked up on PATH when it has no slash) and collects stdout and stderr.
ProcessResult run(const std::vector<std::string> & args)
{
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char *> argv;
  for (const auto & a : args) {
    argv.push_back(const_cast<char *>(a.c_str()));
  }
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    throw std::runtime_error(
      "cannot run '" + args[0] + "' (the robot_dynamics package's command line): " + std::strerror(rc));
  }
  ProcessResult result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string * sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) {
        continue;
      }
      const ssize_t k = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (k > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(k));
      } else if (k == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto & fd : fds) {
    if (fd.fd >= 0) {
      ::close(fd.fd);
    }
  }
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  return result;
}

/// The last non-empty line of `text` (a command's one-line reason).
std::string last_line(const std::string & text)
{
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      last = line;
    }
  }
  return last;
}

}  // namespace

std::string format_names(const std::vector<std::string> & names)
{
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    s += (i ? ", '" : "'") + names[i] + "'";
  }
  return s + "]";
}

std::shared_ptr<EngineModel> EngineModel::from_description(
  const std::string & urdf, const std::string & drivetrain, const ModelChecks & checks)
{
  if (urdf.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw std::runtime_error("the robot description (URDF text) is empty");
  }
  TempFile file(urdf, ".urdf");
  std::vector<std::string> args = {converter_path(), "engine-model", "--urdf", file.path()};
  if (!drivetrain.empty()) {
    args.push_back("--drivetrain");
    args.push_back(drivetrain);
  }
  if (checks.strict) {
    args.push_back("--strict");
  }
  if (checks.effort_limits_given) {
    args.push_back("--allow-no-effort-limit");
  }
  const ProcessResult r = run(args);
  if (r.status != 0) {
    std::string reason = last_line(r.err);
    if (reason.empty()) {
      reason = r.status < 0 ? "killed by a signal" : "exit status " + std::to_string(r.status);
    }
    throw std::runtime_error("robot-dynamics engine-model failed: " + reason);
  }
  return from_text(r.out);
}

std::shared_ptr<EngineModel> EngineModel::from_text(const std::string & text)
{
  char err[512] = {0};
  // The workspace's size depends on nb and nq, which the text holds: read them first, then build
  // the model with the workspace at the end of its block.
  rd_model_size size{};
  if (rd_model_text_size(text.c_str(), &size, err, sizeof(err)) != RD_OK) {
    throw std::runtime_error(std::string("engine model text: ") + err);
  }
  const int nb = size.nb, nq = size.nq;

  std::shared_ptr<EngineModel> self(new EngineModel());
  void * work_memory = nullptr;
  if (
    rd_model_parse(&self->model_, text.c_str(), rd_work_bytes(nb, nq), &work_memory, err, sizeof(err)) !=
    RD_OK)
  {
    throw std::runtime_error(std::string("engine model text: ") + err);
  }
  rd_work_bind(&self->work_, work_memory, nb, nq);
  const rd_model & m = self->model_;
  if (m.joint_name == nullptr || m.effort_limit == nullptr) {
    throw std::runtime_error("engine model text: no joint_names or effort_limit line");
  }
  self->joint_names_.reserve(static_cast<size_t>(m.nq));
  for (int k = 0; k < m.nq; ++k) {
    self->joint_names_.emplace_back(m.joint_name[k]);
    self->effort_limits_.push_back(m.effort_limit[k]);
    self->position_lower_.push_back(m.position_lower[k]);
    self->position_upper_.push_back(m.position_upper[k]);
    self->velocity_limits_.push_back(m.velocity_limit[k]);
  }
  // The first line: "robot_dynamics-engine-model 1 <robot name>"
  std::istringstream first(text.substr(0, text.find('\n')));
  std::string tag, version;
  first >> tag >> version;
  std::getline(first >> std::ws, self->robot_name_);
  return self;
}

EngineModel::~EngineModel() { rd_model_free(&model_); }

std::vector<int> EngineModel::indices_of(const std::vector<std::string> & names) const
{
  std::vector<int> out;
  out.reserve(names.size());
  for (const auto & name : names) {
    const int k = rd_joint_index(&model_, name.c_str());
    if (k < 0) {
      throw std::runtime_error(
        "Invalid joint name '" + name + "'. Valid names: " + format_names(joint_names_));
    }
    out.push_back(k);
  }
  return out;
}

}  // namespace robot_dynamics_control
