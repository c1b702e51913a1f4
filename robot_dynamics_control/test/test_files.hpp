// Test inputs: the bundled robots of robot_dynamics and parameter files for the controllers.
#ifndef ROBOT_DYNAMICS_CONTROL__TEST_FILES_HPP_
#define ROBOT_DYNAMICS_CONTROL__TEST_FILES_HPP_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>

#include "ament_index_cpp/get_package_prefix.hpp"
#include "ament_index_cpp/get_package_share_directory.hpp"

namespace robot_dynamics_control::test
{

/// share/robot_dynamics/<relative> (the installed robot_dynamics package).
inline std::string robot_file(const std::string & relative)
{
  return ament_index_cpp::get_package_share_directory("robot_dynamics") + "/" + relative;
}

inline std::string read_text(const std::string & path)
{
  std::ifstream f(path);
  if (!f) {
    throw std::runtime_error("cannot read " + path);
  }
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

/// The engine's model text of the URDF text `urdf` with the drive-train YAML `drivetrain` ("" :
/// none), as a launch makes the robot_model parameter: `robot-dynamics engine-model --urdf FILE
/// [--drivetrain YAML] OPTIONS` (OPTIONS e.g. "--strict"), run here, outside the plugins (robot_dynamics'
/// lib/robot_dynamics/robot-dynamics, else `robot-dynamics` on PATH). "" when the command fails (its
/// reason on stderr); each text is made once per test process.
inline std::string engine_model_text(const std::string & urdf, const std::string & drivetrain, const std::string & options)
{
  static std::map<std::tuple<std::string, std::string, std::string>, std::string> made;
  const auto key = std::make_tuple(urdf, drivetrain, options);
  if (const auto it = made.find(key); it != made.end()) {
    return it->second;
  }
  std::string cli = "robot-dynamics";
  try {
    const std::string installed = ament_index_cpp::get_package_prefix("robot_dynamics") + "/lib/robot_dynamics/robot-dynamics";
    if (::access(installed.c_str(), X_OK) == 0) {
      cli = installed;
    }
  } catch (const std::exception &) {
    // not in the ament index: PATH
  }
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("rdc-model-" + std::to_string(::getpid()) + "-" + std::to_string(made.size()) + ".urdf"))
                             .string();
  std::ofstream(file) << urdf;
  auto quoted = [](const std::string & s) { return "'" + s + "'"; };
  std::string command = quoted(cli) + " engine-model --urdf " + quoted(file);
  if (!drivetrain.empty()) {
    command += " --drivetrain " + quoted(drivetrain);
  }
  command += " " + options;
  std::string text;
  if (std::FILE * out = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    for (size_t k; (k = std::fread(buffer, 1, sizeof buffer, out)) > 0;) {
      text.append(buffer, k);
    }
    const int status = ::pclose(out);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      text.clear();
    }
  }
  std::filesystem::remove(file);
  return made[key] = text;
}

/// A parameters file (key /**) holding `body` (YAML lines indented by 4) and robot_model, the model
/// text of the URDF text `urdf` made as a launch makes it (robot_dynamics' ros2_control.robot_models):
/// with body's `drivetrain: PATH` line (taken out of the body), strict unless body sets
/// allow_nonphysical_model: true, with --allow-no-effort-limit where body gives effort_limits; an
/// empty robot_model where the command fails. Removed at destruction.
class ParamsFile
{
public:
  ParamsFile(const std::string & urdf, const std::string & body)
  {
    path_ = (std::filesystem::temp_directory_path() /
             ("rdc-params-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++) + ".yaml"))
              .string();
    std::string drivetrain, rest;
    bool allow = false, limits = false, given = false;
    std::istringstream in(body);
    for (std::string line; std::getline(in, line);) {
      const std::string key = line.substr(0, line.find(':') == std::string::npos ? 0 : line.find(':'));
      std::string value = line.find(':') == std::string::npos ? "" : line.substr(line.find(':') + 1);
      value.erase(0, value.find_first_not_of(" \"'"));
      value.erase(value.find_last_not_of(" \"'") + 1);
      if (key == "    drivetrain") {
        drivetrain = value;
        continue;
      }
      allow = allow || (key == "    allow_nonphysical_model" && (value == "true" || value == "True"));
      limits = limits || (key == "    effort_limits" && value != "[]" && !value.empty());
      given = given || key == "    robot_model";
      rest += line + "\n";
    }
    std::ostringstream out;
    out << "/**:\n  ros__parameters:\n" << rest;
    if (!given) {
      const std::string text = engine_model_text(
        urdf, drivetrain, std::string(allow ? "" : "--strict") + (limits ? " --allow-no-effort-limit" : ""));
      out << "    robot_model: " << (text.empty() ? "\"\"\n" : "|\n");
      std::istringstream lines(text);
      for (std::string line; std::getline(lines, line);) {
        out << "      " << line << "\n";
      }
    }
    std::ofstream(path_) << out.str();
  }
  ~ParamsFile() { std::filesystem::remove(path_); }
  const std::string & path() const { return path_; }

private:
  static int & counter()
  {
    static int c = 0;
    return c;
  }
  std::string path_;
};

}  // namespace robot_dynamics_control::test

#endif  // ROBOT_DYNAMICS_CONTROL__TEST_FILES_HPP_
