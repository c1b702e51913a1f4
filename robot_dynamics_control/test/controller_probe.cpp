// Runs one controller of this package on plain doubles for test_controllers.py: commands on stdin,
// efforts (17 significant digits) on stdout.
//
//   controller_probe gravity|pd|ct PARAMS_FILE [URDF_FILE] [--chained]
// stdin, one command a line (vectors in the controller's joint order, n values each):
//   state q.. qd..                 the measured state (the commanded joints, then the model's others)
//   activate | deactivate          the lifecycle transitions (the probe starts active); each prints
//                                  "effort e.. | status S": the first command, the stop behaviour's
//   update T                       one update at time T [s]; prints "effort e.. | status S" and, for
//                                  ct, "reference q_r.. qd_r.. qdd_r.." (the one the law used)
//   trajectory STAMP P V A         a JointTrajectory of P points follows, one a line:
//                                  "t q.. [qd.. if V] [qdd.. if A]" (pd: ~/reference; ct:
//                                  ~/joint_trajectory); prints "ok" or "rejected: reason"
//   chained q.. qd.. qdd..         ct in chained mode: writes its reference interfaces
//   param NAME v..                 sets a double-array parameter while running; prints "ok" or
//                                  "rejected: reason"
//   param_double NAME v            the same for a double parameter
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "controller_harness.hpp"
#include "robot_dynamics_control/computed_torque_controller.hpp"
#include "robot_dynamics_control/gravity_compensation_controller.hpp"
#include "robot_dynamics_control/pd_gravity_controller.hpp"

using robot_dynamics_control::test::Harness;

namespace
{

std::vector<double> read_values(std::istream & in, size_t n)
{
  std::vector<double> v(n);
  for (auto & x : v) {  // strtod: "nan" and "inf" too
    std::string token;
    char * end = nullptr;
    if (!(in >> token) || (x = std::strtod(token.c_str(), &end), *end != '\0')) {
      throw std::runtime_error("expected " + std::to_string(n) + " numbers");
    }
  }
  return v;
}

void print(const char * tag, const std::vector<double> & v)
{
  std::printf("%s", tag);
  for (double x : v) {
    std::printf(" %.17g", x);
  }
}

template<typename C>
int run(const std::string & name, const std::string & params, const std::string & urdf, bool chained)
{
  Harness<C> h(name, params, urdf, chained);
  h.activate();
  const auto & joints = h.controller->core().joints();
  const size_t n = joints.size();
  const size_t m = h.state_values.size() / 2;  // the joints read: commanded, then the others
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    if (!(in >> cmd)) {
      continue;
    }
    if (cmd == "state") {
      const auto q = read_values(in, m);
      const auto qd = read_values(in, m);
      h.set_state(q, qd);
    } else if (cmd == "activate" || cmd == "deactivate") {
      if (cmd == "activate") {
        h.activate();
      } else {
        h.deactivate();
      }
      print("effort", h.command_values);
      std::printf(" | status %d\n", h.controller->core().status());
    } else if (cmd == "update") {
      double t = 0.0;
      in >> t;
      h.update(t);
      print("effort", h.command_values);
      std::printf(" | status %d\n", h.controller->core().status());
      if constexpr (std::is_same_v<C, robot_dynamics_control::ComputedTorqueController>) {
        print("reference", h.controller->applied_reference());
        std::printf("\n");
      }
    } else if (cmd == "trajectory") {
      double stamp = 0.0;
      size_t points = 0;
      int has_v = 0, has_a = 0;
      in >> stamp >> points >> has_v >> has_a;
      trajectory_msgs::msg::JointTrajectory msg;
      msg.header.stamp = rclcpp::Time(static_cast<int64_t>(stamp * 1e9), RCL_ROS_TIME);
      msg.joint_names = joints;
      for (size_t p = 0; p < points; ++p) {
        std::getline(std::cin, line);
        std::istringstream row(line);
        trajectory_msgs::msg::JointTrajectoryPoint point;
        const double t = read_values(row, 1)[0];
        point.time_from_start = rclcpp::Duration::from_nanoseconds(static_cast<int64_t>(std::llround(t * 1e9)));
        point.positions = read_values(row, n);
        if (has_v) {
          point.velocities = read_values(row, n);
        }
        if (has_a) {
          point.accelerations = read_values(row, n);
        }
        msg.points.push_back(point);
      }
      std::string reason;
      if constexpr (std::is_same_v<C, robot_dynamics_control::PdGravityController>) {
        reason = h.controller->set_reference(msg);
      } else if constexpr (std::is_same_v<C, robot_dynamics_control::ComputedTorqueController>) {
        reason = h.controller->set_trajectory(msg);
      } else {
        reason = "this controller takes no reference";
      }
      std::printf("%s\n", reason.empty() ? "ok" : ("rejected: " + reason).c_str());
    } else if (cmd == "chained") {
      const auto v = read_values(in, 3 * n);
      if (h.references.size() != 3 * n) {
        throw std::runtime_error("no reference interfaces");
      }
      for (size_t k = 0; k < v.size(); ++k) {
        h.references[k]->set_value(v[k]);
      }
    } else if (cmd == "param") {
      std::string pname;
      in >> pname;
      std::vector<double> v;
      for (std::string token; in >> token;) {
        v.push_back(std::strtod(token.c_str(), nullptr));
      }
      const auto result = h.controller->get_node()->set_parameter(rclcpp::Parameter(pname, v));
      std::printf("%s\n", result.successful ? "ok" : ("rejected: " + result.reason).c_str());
    } else if (cmd == "param_double") {
      std::string pname, token;
      in >> pname >> token;
      const auto result =
        h.controller->get_node()->set_parameter(rclcpp::Parameter(pname, std::strtod(token.c_str(), nullptr)));
      std::printf("%s\n", result.successful ? "ok" : ("rejected: " + result.reason).c_str());
    } else {
      throw std::runtime_error("unknown command '" + cmd + "'");
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char ** argv)
{
  if (argc < 3) {
    std::fprintf(stderr, "usage: controller_probe gravity|pd|ct PARAMS_FILE [URDF_FILE] [--chained]\n");
    return 2;
  }
  const std::string kind = argv[1], params = argv[2];
  std::string urdf;
  bool chained = false;
  for (int k = 3; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "--chained") {
      chained = true;
    } else {
      std::ifstream f(a);
      urdf.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
  }
  rclcpp::init(1, argv);
  int rc = 2;
  try {
    if (kind == "gravity") {
      rc = run<robot_dynamics_control::GravityCompensationController>("gravity_compensation", params, urdf, chained);
    } else if (kind == "pd") {
      rc = run<robot_dynamics_control::PdGravityController>("pd_gravity", params, urdf, chained);
    } else if (kind == "ct") {
      rc = run<robot_dynamics_control::ComputedTorqueController>("computed_torque", params, urdf, chained);
    } else {
      std::fprintf(stderr, "unknown controller '%s': gravity, pd or ct\n", kind.c_str());
    }
  } catch (const std::exception & e) {
    std::fprintf(stderr, "controller_probe: %s\n", e.what());
    rc = 1;
  }
  rclcpp::shutdown();
  return rc;
}
