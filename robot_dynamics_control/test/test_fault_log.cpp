// A fault's reason is logged once, by the controller's node outside update() (a timer of its
// executor), and again only for another fault; a clamped reference is logged once when the
// clamping starts.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "controller_harness.hpp"
#include "rcutils/logging.h"
#include "robot_dynamics_control/computed_torque_controller.hpp"
#include "robot_dynamics_control/pd_gravity_controller.hpp"
#include "test_files.hpp"

namespace
{

using robot_dynamics_control::test::Harness;
using robot_dynamics_control::test::ParamsFile;
using robot_dynamics_control::test::read_text;
using robot_dynamics_control::test::robot_file;

std::mutex lines_mutex;
std::vector<std::string> lines;  // the messages logged by the controllers' loggers
rcutils_logging_output_handler_t default_handler = nullptr;

void capture(
  const rcutils_log_location_t * location, int severity, const char * name, rcutils_time_point_value_t stamp,
  const char * format, va_list * args)
{
  va_list copy;
  va_copy(copy, *args);
  char text[1024];
  std::vsnprintf(text, sizeof text, format, copy);
  va_end(copy);
  {
    std::lock_guard<std::mutex> lock(lines_mutex);
    lines.emplace_back(std::string(name ? name : "") + ": " + text);
  }
  if (default_handler) {
    default_handler(location, severity, name, stamp, format, args);
  }
}

size_t count(const std::string & needle)
{
  std::lock_guard<std::mutex> lock(lines_mutex);
  size_t n = 0;
  for (const auto & l : lines) {
    n += l.find(needle) != std::string::npos ? 1 : 0;
  }
  return n;
}

class FaultLog : public ::testing::Test
{
protected:
  static void SetUpTestSuite()
  {
    rclcpp::init(0, nullptr);
    default_handler = rcutils_logging_get_output_handler();
    rcutils_logging_set_output_handler(capture);
  }
  static void TearDownTestSuite()
  {
    rcutils_logging_set_output_handler(default_handler);
    rclcpp::shutdown();
  }

  const std::string urdf = read_text(robot_file("urdf/puma560.urdf"));
  const std::string head = "    joints: [joint1, joint2, joint3, joint4, joint5, joint6]\n    drivetrain: " +
                           robot_file("config/puma560_drivetrain.yaml") + "\n";
};

/// Runs the node's callbacks (its timers) for `seconds`, as the controller manager's executor does.
template<typename C>
void spin(Harness<C> & h, double seconds)
{
  rclcpp::executors::SingleThreadedExecutor executor;
  executor.add_node(h.controller->get_node()->get_node_base_interface());
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    executor.spin_some(std::chrono::milliseconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  executor.remove_node(h.controller->get_node()->get_node_base_interface());
}

TEST_F(FaultLog, EachFaultIsLoggedOnceOutsideUpdate)
{
  ParamsFile params(urdf, head + "    kp: [100.0]\n    kd: [5.0]\n    max_tracking_error: [0.2]\n");
  Harness<robot_dynamics_control::PdGravityController> h("pd_gravity", params.path(), urdf);
  h.activate();
  const std::vector<double> zero(6, 0.0);
  std::vector<double> bad = zero;
  bad[2] = std::nan("");
  for (int k = 0; k < 200; ++k) {  // the same fault, 200 ticks: nothing logged from update()
    h.set_state(bad, zero);
    h.update(1.0 + 0.001 * k);
  }
  EXPECT_EQ(count("fault:"), 0u) << "update() logs nothing";
  spin(h, 0.5);
  EXPECT_EQ(count("fault: the measured state of joint 'joint3' is not finite"), 1u);
  for (int k = 0; k < 100; ++k) {  // valid again, then another fault: a tracking error of joint2
    std::vector<double> q = zero;
    q[1] = k < 50 ? 0.0 : 0.5;
    h.set_state(q, zero);
    h.update(2.0 + 0.001 * k);
  }
  spin(h, 0.5);
  EXPECT_EQ(count("fault: tracking error of joint 'joint2' is 0.5, above max_tracking_error 0.2"), 1u);
  EXPECT_EQ(count("fault:"), 2u);
}

TEST_F(FaultLog, AClampedReferenceIsLoggedOnceWhenTheClampingStarts)
{
  ParamsFile params(urdf, head + "    kp: [100.0]\n    kd: [20.0]\n");
  Harness<robot_dynamics_control::ComputedTorqueController> h("computed_torque", params.path(), urdf, true);
  h.activate();
  const std::vector<double> zero(6, 0.0);
  for (auto & r : h.references) {
    r->set_value(0.0);
  }
  h.references[0]->set_value(6.0);  // joint1's position, 3.2 rad past its limit
  for (int k = 0; k < 300; ++k) {
    h.set_state(zero, zero);
    h.update(1.0 + 0.001 * k);
  }
  spin(h, 0.5);
  EXPECT_EQ(count("the reference of joint 'joint1' is clamped to its limits"), 1u);
}

}  // namespace
