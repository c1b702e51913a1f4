// What the fuzz of the controllers shares (test_fuzz_controllers.cpp, test_fuzz_findings.cpp,
// fuzzer.hpp): the run's settings and random draws, the bundled robots read from their URDF text,
// values as text, the journal of a case's last actions, its findings, the parameters a controller's
// node declares, and the test fixture. The definitions: fuzz_support.cpp.
#ifndef ROBOT_DYNAMICS_CONTROL__FUZZ_SUPPORT_HPP_
#define ROBOT_DYNAMICS_CONTROL__FUZZ_SUPPORT_HPP_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "controller_harness.hpp"
#include "lifecycle_msgs/msg/state.hpp"
#include "rcl_interfaces/msg/parameter_type.hpp"
#include "geometry_msgs/msg/pose_stamped.hpp"
#include "robot_dynamics_control/cartesian_impedance_controller.hpp"
#include "robot_dynamics_control/computed_torque_controller.hpp"
#include "robot_dynamics_control/gravity_compensation_controller.hpp"
#include "robot_dynamics_control/operational_space_controller.hpp"
#include "robot_dynamics_control/pd_gravity_controller.hpp"
#include "test_files.hpp"
#include "trajectory_msgs/msg/joint_trajectory.hpp"

namespace rd_fuzz
{

using robot_dynamics_control::CartesianImpedanceController;
using robot_dynamics_control::ComputedTorqueController;
using robot_dynamics_control::OperationalSpaceController;
using robot_dynamics_control::GravityCompensationController;
using robot_dynamics_control::PdGravityController;
using robot_dynamics_control::test::Harness;
using robot_dynamics_control::test::ParamsFile;
using robot_dynamics_control::test::read_text;
using robot_dynamics_control::test::robot_file;
using rcl_interfaces::msg::ParameterType;
using lifecycle_msgs::msg::State;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// -- settings --------------------------------------------------------------------------------------

// -- settings --------------------------------------------------------------------------------------

struct Settings
{
  uint64_t seed = 42;
  long budget = 3000;
};

/// RD_FUZZ_SEED and RD_FUZZ_BUDGET from the environment, else the defaults (the header of
/// test_fuzz_controllers.cpp).
Settings settings();

/// The case's own seed: the run's seed mixed with the case's name (FNV-1a).
uint64_t case_seed(uint64_t seed, const std::string & name);

/// Random draws from one std::mt19937_64 stream, converted by hand (the same on every library).
class Random
{
public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// 10^[log10(lo), log10(hi)]
  double log_uniform(double lo, double hi) { return std::pow(10.0, uniform(std::log10(lo), std::log10(hi))); }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(engine_() % n); }
  bool chance(double p) { return uniform() < p; }
  template<typename T>
  const T & pick(const std::vector<T> & v) { return v[below(v.size())]; }
  template<typename T>
  void shuffle(std::vector<T> & v)
  {
    for (size_t i = v.size(); i > 1; --i) {
      std::swap(v[i - 1], v[below(i)]);
    }
  }

private:
  std::mt19937_64 engine_;
};

/// Values that break arithmetic: non-finite, huge, denormal, signed zero, negative.
extern const std::vector<double> kHostile;

// -- the robots ------------------------------------------------------------------------------------

/// A bundled robot: its URDF text, drive train, and its moving joints' limits read from the URDF
/// text here (not by the package's loader, which is under test).
/// A bundled robot: its URDF text, drive train, and its moving joints' limits read from the URDF
/// text here (not by the package's loader, which is under test).
struct Robot
{
  std::string name, urdf, drivetrain;
  std::string tip, base;            // the model's last frame and its first (the task-space controllers')
  std::vector<std::string> joints;  // URDF order
  std::vector<double> lower, upper, velocity, effort;

  size_t n() const { return joints.size(); }
  int index(const std::string & joint) const
  {
    const auto it = std::find(joints.begin(), joints.end(), joint);
    return it == joints.end() ? -1 : static_cast<int>(it - joints.begin());
  }
};

/// The bundled robot urdf/<name>.urdf with the drive train config/<drivetrain>.
Robot load_robot(const std::string & name, const std::string & drivetrain);

/// "    joints: [...]" in the URDF's order.
std::string joints_line(const Robot & robot);

/// The middle of each joint's range.
std::vector<double> middle(const Robot & robot);

// -- text of values --------------------------------------------------------------------------------

std::string format(double x);
std::string format(const std::vector<double> & v);
std::string format(const std::vector<std::string> & v);
std::string format(const rclcpp::ParameterValue & value);
std::string format(const trajectory_msgs::msg::JointTrajectory & msg);

/// A parameter's value as a ROS parameters file (YAML) writes it; "" for an empty array (left out).
std::string yaml(const rclcpp::ParameterValue & value);

bool has_nonfinite(const rclcpp::ParameterValue & value);

// -- the journal: the last actions of a case, printed with a finding or by the crash handler -------

class Journal
{
public:
  static constexpr int kLines = 24;
  static constexpr size_t kWidth = 640;

  void start(const std::string & header)
  {
    std::snprintf(header_, sizeof header_, "%s", header.c_str());
    count_ = 0;
  }
  void add(long step, const std::string & line)
  {
    std::snprintf(lines_[count_ % kLines], kWidth, "  step %ld: %s", step, line.c_str());
    if (line.size() + 24 > kWidth) {
      std::snprintf(lines_[count_ % kLines] + kWidth - 5, 5, "...");
    }
    ++count_;
  }
  std::string text() const
  {
    std::string s = std::string(header_) + "\n";
    for (long k = std::max(0L, count_ - kLines); k < count_; ++k) {
      s += std::string(lines_[k % kLines]) + "\n";
    }
    return s;
  }
  /// From a signal handler: write(2) only.
  void dump(int fd) const
  {
    const auto put = [fd](const char * s) { (void)!::write(fd, s, std::strlen(s)); };
    put("\n*** crashed; the case and its last actions:\n");
    put(header_);
    put("\n");
    for (long k = std::max(0L, count_ - kLines); k < count_; ++k) {
      put(lines_[k % kLines]);
      put("\n");
    }
  }

private:
  char header_[512] = "";
  char lines_[kLines][kWidth] = {};
  long count_ = 0;
};

/// The running case's journal.
extern Journal journal;

/// The crash handler: the journal to stderr, then the signal's default action.
extern "C" void on_crash(int sig);

// -- findings --------------------------------------------------------------------------------------

/// Defects found in a case, by kind: how many, and the first with the actions before it.
class Findings
{
public:
  void add(const std::string & kind, long step, const std::string & detail)
  {
    auto & f = found_[kind];
    if (f.count++ == 0) {
      f.first = "first at step " + std::to_string(step) + ": " + detail + "\n" + journal.text();
    }
  }
  void report() const
  {
    for (const auto & [kind, f] : found_) {
      ADD_FAILURE() << kind << " (" << f.count << " times)\n" << f.first;
    }
  }
  bool empty() const { return found_.empty(); }

private:
  struct Found
  {
    long count = 0;
    std::string first;
  };
  std::map<std::string, Found> found_;
};

// -- the controllers' parameters, as the node describes them --------------------------------------

struct ParamInfo
{
  std::string name;
  uint8_t type;
  bool read_only;
  std::vector<std::string> words;  // of the description: the candidate values of a string parameter
};

/// A target pose for ~/target_pose: a position within 1.5 m of the base, a unit quaternion, in the
/// base's frame ("" or `robot.base`); now and then (`hostile` of the time) a value of kHostile, a
/// quaternion that is not unit, an unknown frame_id.
geometry_msgs::msg::PoseStamped random_target(Random & rng, const Robot & robot, double hostile);
/// A value for the task-space reference interface `kind` (TaskTarget::interface_names()): as
/// random_target's, NaN 30 % of the time (not commanded).
double random_task_reference(Random & rng, const std::string & kind, double hostile);

/// Every parameter the controller's node declares (ROS's own use_sim_time and QoS overrides aside).
std::vector<ParamInfo> discover(const rclcpp_lifecycle::LifecycleNode & node);

// -- the laws --------------------------------------------------------------------------------------

enum class Law { gravity, pd, ct, task };

template<typename C>
constexpr Law law_of()
{
  if constexpr (std::is_same_v<C, PdGravityController>) {
    return Law::pd;
  } else if constexpr (std::is_same_v<C, ComputedTorqueController>) {
    return Law::ct;
  } else if constexpr (
    std::is_same_v<C, CartesianImpedanceController> || std::is_same_v<C, OperationalSpaceController>) {
    return Law::task;
  } else {
    return Law::gravity;
  }
}

/// The fault flag of the last tick (TickStatus).
template<typename C>
bool faulting(const C & controller)
{
  return (controller.core().status() & robot_dynamics_control::TICK_FAULT) != 0;
}

// -- the test fixture: ROS initialised once, the two robots loaded once ----------------------------

class FuzzControllers : public ::testing::Test
{
protected:
  static void SetUpTestSuite()
  {
    rclcpp::init(0, nullptr);
    for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) {
      std::signal(sig, on_crash);
    }
  }
  static void TearDownTestSuite() { rclcpp::shutdown(); }

  static const Robot & puma560()
  {
    static const Robot r = load_robot("puma560", "puma560_drivetrain.yaml");
    return r;
  }
  static const Robot & three_dof_geared()
  {
    static const Robot r = load_robot("three_dof_geared", "three_dof_geared_drivetrain.yaml");
    return r;
  }
};

}  // namespace rd_fuzz

#endif  // ROBOT_DYNAMICS_CONTROL__FUZZ_SUPPORT_HPP_
