// update() of every controller allocates and frees nothing: malloc, calloc, realloc, free and the
// aligned allocators are interposed (allocation_counter.hpp) and counted on this thread around
// update() calls only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "allocation_counter.hpp"
#include "controller_harness.hpp"
#include "robot_dynamics_control/computed_torque_controller.hpp"
#include "robot_dynamics_control/gravity_compensation_controller.hpp"
#include "robot_dynamics_control/pd_gravity_controller.hpp"
#include "test_files.hpp"

namespace
{

using robot_dynamics_control::test::count_allocations;
using robot_dynamics_control::test::Harness;
using robot_dynamics_control::test::ParamsFile;
using robot_dynamics_control::test::read_text;
using robot_dynamics_control::test::robot_file;

class NoAllocation : public ::testing::Test
{
protected:
  static void SetUpTestSuite() { rclcpp::init(0, nullptr); }
  static void TearDownTestSuite() { rclcpp::shutdown(); }

  const std::string urdf = read_text(robot_file("urdf/puma560.urdf"));
  const std::string joints = "    joints: [joint6, joint5, joint4, joint3, joint2, joint1]\n";
  const std::string drivetrain = "    drivetrain: " + robot_file("config/puma560_drivetrain.yaml") + "\n";
};

/// Updates along a changing state, NaN measurements included (the fault path), counted.
template<typename C>
long updates(Harness<C> & h, double t0, int ticks)
{
  const size_t n = h.state_values.size() / 2;
  std::vector<double> q(n), qd(n);
  long total = 0;
  for (int k = 0; k < ticks; ++k) {
    for (size_t i = 0; i < n; ++i) {
      q[i] = 0.3 * std::sin(0.01 * k + static_cast<double>(i));
      qd[i] = 0.5 * std::cos(0.02 * k + static_cast<double>(i));
    }
    if (k % 97 == 13) {
      q[k % n] = std::nan("");
    }
    h.set_state(q, qd);  // outside the counted part
    total += count_allocations([&] {
      const auto rc = h.update(t0 + 0.001 * k);
      ASSERT_EQ(rc, controller_interface::return_type::OK);
    });
  }
  return total;
}

trajectory_msgs::msg::JointTrajectory three_points(const std::vector<std::string> & names, bool accelerations)
{
  trajectory_msgs::msg::JointTrajectory msg;
  msg.joint_names = names;
  for (int p = 1; p <= 3; ++p) {
    trajectory_msgs::msg::JointTrajectoryPoint point;
    point.time_from_start = rclcpp::Duration::from_seconds(0.4 * p);
    point.positions.assign(names.size(), 0.2 * p);
    point.velocities.assign(names.size(), p == 3 ? 0.0 : 0.1);
    if (accelerations) {
      point.accelerations.assign(names.size(), 0.0);
    }
    msg.points.push_back(point);
  }
  return msg;
}

TEST_F(NoAllocation, CounterSeesAnAllocation)
{
  // the counter itself: a vector allocated in the counted part is seen (and its free)
  const long n = count_allocations([] {
    std::vector<double> v(100, 1.0);
    ASSERT_EQ(v.size(), 100u);
  });
  EXPECT_EQ(n, 2);
}

TEST_F(NoAllocation, GravityCompensation)
{
  ParamsFile params(urdf, joints + drivetrain + "    friction_feedforward: true\n");
  Harness<robot_dynamics_control::GravityCompensationController> h("gravity_compensation", params.path(), urdf);
  h.activate();
  updates(h, 0.0, 5);  // warm
  EXPECT_EQ(updates(h, 1.0, 1000), 0);
  ASSERT_TRUE(h.controller->get_node()->set_parameter(rclcpp::Parameter("friction_feedforward", false)).successful);
  EXPECT_EQ(updates(h, 2.0, 100), 0) << "a parameter change picked up in update()";
  double largest = 0.0;  // the efforts were written
  for (double e : h.command_values) {
    largest = std::max(largest, std::abs(e));
  }
  EXPECT_GT(largest, 1.0);
}

TEST_F(NoAllocation, PdGravity)
{
  ParamsFile params(urdf, joints + drivetrain + "    kp: [100.0]\n    kd: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]\n");
  Harness<robot_dynamics_control::PdGravityController> h("pd_gravity", params.path(), urdf);
  h.activate();
  updates(h, 0.0, 5);
  EXPECT_EQ(updates(h, 1.0, 500), 0) << "holding the position at activation";
  ASSERT_EQ(h.controller->set_reference(three_points(h.controller->core().joints(), false)), "");
  EXPECT_EQ(updates(h, 2.0, 500), 0) << "after a reference";
  ASSERT_TRUE(
    h.controller->get_node()->set_parameter(rclcpp::Parameter("kp", std::vector<double>{50.0})).successful);
  EXPECT_EQ(updates(h, 3.0, 100), 0) << "after a gain change";
}

TEST_F(NoAllocation, ComputedTorqueTrajectory)
{
  ParamsFile params(urdf, joints + drivetrain + "    omega: [15.0]\n    friction_velocity: desired\n");
  Harness<robot_dynamics_control::ComputedTorqueController> h("computed_torque", params.path(), urdf);
  h.activate();
  updates(h, 0.0, 5);
  EXPECT_EQ(updates(h, 1.0, 300), 0) << "holding the position at activation";
  for (bool accelerations : {false, true}) {
    ASSERT_EQ(h.controller->set_trajectory(three_points(h.controller->core().joints(), accelerations)), "");
    EXPECT_EQ(updates(h, 2.0, 1500), 0) << "along and after a trajectory";  // 1.2 s of trajectory, then its end
  }
  ASSERT_TRUE(
    h.controller->get_node()->set_parameter(rclcpp::Parameter("xi", std::vector<double>{0.7})).successful);
  EXPECT_EQ(updates(h, 5.0, 100), 0) << "after a gain change";
}

TEST_F(NoAllocation, ComputedTorqueChained)
{
  ParamsFile params(urdf, joints + drivetrain + "    kp: [100.0]\n    kd: [20.0]\n");
  Harness<robot_dynamics_control::ComputedTorqueController> h("computed_torque", params.path(), urdf, true);
  h.activate();
  ASSERT_TRUE(h.controller->is_in_chained_mode());
  ASSERT_EQ(h.references.size(), 18u);
  for (size_t k = 0; k < h.references.size(); ++k) {
    h.references[k]->set_value(0.01 * static_cast<double>(k));
  }
  updates(h, 0.0, 5);
  EXPECT_EQ(updates(h, 1.0, 1000), 0);
}

}  // namespace
