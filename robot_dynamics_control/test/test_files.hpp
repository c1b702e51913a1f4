// Test inputs: the bundled robots of robot_dynamics and parameter files for the controllers.
#ifndef ROBOT_DYNAMICS_CONTROL__TEST_FILES_HPP_
#define ROBOT_DYNAMICS_CONTROL__TEST_FILES_HPP_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

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

/// A parameters file (key /**) holding `body` (YAML lines indented by 4) and the robot
/// description, removed at destruction.
class ParamsFile
{
public:
  ParamsFile(const std::string & urdf, const std::string & body)
  {
    path_ = (std::filesystem::temp_directory_path() /
             ("rdc-params-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++) + ".yaml"))
              .string();
    std::ostringstream out;
    out << "/**:\n  ros__parameters:\n" << body << "    robot_description: |\n";
    std::istringstream lines(urdf);
    for (std::string line; std::getline(lines, line);) {
      out << "      " << line << "\n";
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
