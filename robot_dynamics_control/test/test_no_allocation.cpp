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
#include "robot_dynamics_control/cartesian_impedance_controller.hpp"
#include "robot_dynamics_control/collision_monitor_controller.hpp"
#include "robot_dynamics_control/computed_torque_controller.hpp"
#include "robot_dynamics_control/gravity_compensation_controller.hpp"
#include "robot_dynamics_control/operational_space_controller.hpp"
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

TEST_F(NoAllocation, AGainChangedWhileRunningIsUsed)
{
  // update() applies a parameter change once (refresh_parameters: a new stamp), and uses it from then on
  ParamsFile params(urdf, joints + drivetrain + "    kp: [100.0]\n    kd: [1.0]\n");
  Harness<robot_dynamics_control::PdGravityController> h("pd_gravity", params.path(), urdf);
  h.activate();
  const size_t n = h.state_values.size() / 2;
  std::vector<double> q(n, 0.0), qd(n, 0.0);
  h.set_state(q, qd);
  ASSERT_EQ(h.update(0.0), controller_interface::return_type::OK);  // the hold latched at q = 0
  std::fill(q.begin(), q.end(), 0.01);  // 0.01 rad from the hold, at rest
  h.set_state(q, qd);
  auto efforts = [&](double t) {
    EXPECT_EQ(h.update(t), controller_interface::return_type::OK);
    return h.command_values;
  };
  const auto at_100 = efforts(0.001);
  EXPECT_EQ(efforts(0.002), at_100) << "the same state and gains, the same efforts";
  auto node = h.controller->get_node();
  ASSERT_TRUE(node->set_parameter(rclcpp::Parameter("kp", std::vector<double>{50.0})).successful);
  const auto at_50 = efforts(0.003);
  double largest = 0.0;
  for (size_t i = 0; i < at_50.size(); ++i) {
    largest = std::max(largest, std::abs(at_50[i] - at_100[i]));
  }
  EXPECT_GT(largest, 0.1) << "kp 100 -> 50 at 0.01 rad changes the efforts";
  EXPECT_EQ(efforts(0.004), at_50);
  ASSERT_TRUE(node->set_parameter(rclcpp::Parameter("kp", std::vector<double>{100.0})).successful);
  EXPECT_EQ(efforts(0.005), at_100) << "kp back to 100: the first efforts again";
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

/// Every parameter the controller declares changed while running, between counted updates: each
/// double array to one value, to one per joint and back (a change of length), each double and bool
/// to another valid value, and a refused value (NaN) of each; read-only ones are refused.
template<typename C>
void every_parameter(Harness<C> & h, double t0)
{
  auto node = h.controller->get_node();
  const size_t n = h.command_values.size();
  const auto names = node->list_parameters({}, 0).names;
  int changed = 0;
  for (const auto & name : names) {
    const auto p = node->get_parameter(name);
    std::vector<rclcpp::Parameter> values;
    if (p.get_type() == rclcpp::ParameterType::PARAMETER_DOUBLE_ARRAY && !p.as_double_array().empty()) {
      const double v = p.as_double_array()[0] > 0.0 ? p.as_double_array()[0] : 0.5;
      values = {rclcpp::Parameter(name, std::vector<double>(n, 1.1 * v)), rclcpp::Parameter(name, std::vector<double>{v}),
                rclcpp::Parameter(name, std::vector<double>(n, v))};
    } else if (p.get_type() == rclcpp::ParameterType::PARAMETER_DOUBLE) {
      const double v = p.as_double() > 0.0 ? p.as_double() : 0.01;
      values = {rclcpp::Parameter(name, 0.5 * v), rclcpp::Parameter(name, v)};
    } else if (p.get_type() == rclcpp::ParameterType::PARAMETER_BOOL) {
      values = {rclcpp::Parameter(name, !p.as_bool()), rclcpp::Parameter(name, p.as_bool())};
    }
    for (const auto & v : values) {
      changed += node->set_parameter(v).successful ? 1 : 0;
      EXPECT_EQ(updates(h, t0, 30), 0) << "after setting " << name << " to " << v.value_to_string();
      t0 += 0.03;
    }
    if (p.get_type() == rclcpp::ParameterType::PARAMETER_DOUBLE_ARRAY) {
      EXPECT_FALSE(node->set_parameter(rclcpp::Parameter(name, std::vector<double>{std::nan("")})).successful) << name;
    }
    if (p.get_type() == rclcpp::ParameterType::PARAMETER_DOUBLE) {
      EXPECT_FALSE(node->set_parameter(rclcpp::Parameter(name, std::nan(""))).successful) << name;
    }
  }
  EXPECT_GE(changed, 4) << "parameters changed while running";
  EXPECT_EQ(updates(h, t0, 100), 0);
}

TEST_F(NoAllocation, EveryParameterGravityCompensation)
{
  ParamsFile params(urdf, joints + drivetrain);
  Harness<robot_dynamics_control::GravityCompensationController> h("gravity_compensation", params.path(), urdf);
  h.activate();
  updates(h, 0.0, 5);
  every_parameter(h, 1.0);
}

TEST_F(NoAllocation, EveryParameterPdGravity)
{
  ParamsFile params(urdf, joints + drivetrain + "    kp: [100.0]\n    kd: [2.0]\n    max_tracking_error: [0.0]\n");
  Harness<robot_dynamics_control::PdGravityController> h("pd_gravity", params.path(), urdf);
  h.activate();
  updates(h, 0.0, 5);
  ASSERT_EQ(h.controller->set_reference(three_points(h.controller->core().joints(), false)), "");
  every_parameter(h, 1.0);
}

TEST_F(NoAllocation, EveryParameterComputedTorque)
{
  ParamsFile params(urdf, joints + drivetrain + "    omega: [15.0]\n");
  Harness<robot_dynamics_control::ComputedTorqueController> h("computed_torque", params.path(), urdf);
  h.activate();
  updates(h, 0.0, 5);
  ASSERT_EQ(h.controller->set_trajectory(three_points(h.controller->core().joints(), true)), "");
  every_parameter(h, 1.0);
}

/// The collision monitor chained, its references set to `effort` (n values).
std::unique_ptr<Harness<robot_dynamics_control::CollisionMonitorController>> monitor(
  const std::string & params_path, const std::string & urdf, double effort)
{
  auto h = std::make_unique<Harness<robot_dynamics_control::CollisionMonitorController>>(
    "collision_monitor", params_path, urdf, true);
  h->activate();
  for (auto & r : h->references) {
    r->set_value(effort);
  }
  return h;
}

TEST_F(NoAllocation, CollisionMonitor)
{
  // the moving state under constant efforts is a collision to the observer: detection, the event
  // published, the hold, the reset, the reflex and a NaN reference (the stop behaviour)
  ParamsFile params(urdf, joints + drivetrain + "    thresholds: [0.5]\n    relative: [0.0]\n");
  auto h = monitor(params.path(), urdf, 1.0);
  auto & c = *h->controller;
  updates(*h, 0.0, 5);
  EXPECT_EQ(updates(*h, 1.0, 1000), 0) << "passing through, detecting, holding";
  EXPECT_TRUE(c.latched());
  EXPECT_GE(c.detections(), 1u);
  ASSERT_TRUE(c.request_reset().first);
  EXPECT_EQ(updates(*h, 2.0, 300), 0) << "after a reset";
  ASSERT_TRUE(c.get_node()->set_parameter(rclcpp::Parameter("reaction", "reflex")).successful);
  c.request_reset();
  EXPECT_EQ(updates(*h, 3.0, 300), 0) << "the reflex";
  EXPECT_GE(c.detections(), 2u);
  for (auto & r : h->references) {
    r->set_value(std::nan(""));
  }
  c.request_reset();
  EXPECT_EQ(updates(*h, 4.0, 100), 0) << "NaN references: the stop behaviour";
}

TEST_F(NoAllocation, EveryParameterCollisionMonitor)
{
  ParamsFile params(urdf, joints + drivetrain);
  auto h = monitor(params.path(), urdf, 0.5);
  updates(*h, 0.0, 5);
  every_parameter(*h, 1.0);
}

TEST_F(NoAllocation, FaultsAndTheStopBehaviour)
{
  // a tracking fault latched, the hold with damping, the state published: none allocates
  ParamsFile params(urdf, joints + drivetrain + "    kp: [100.0]\n    kd: [2.0]\n    max_tracking_error: [0.05]\n");
  Harness<robot_dynamics_control::PdGravityController> h("pd_gravity", params.path(), urdf);
  h.activate();
  EXPECT_EQ(updates(h, 0.0, 300), 0);
  EXPECT_NE(h.controller->core().status() & robot_dynamics_control::TICK_FAULT, 0) << "the moving state faults";
}

/// The iiwa14's tool held by a task-space controller (7 joints, frame iiwa_link_ee).
class TaskSpaceNoAllocation : public NoAllocation
{
protected:
  const std::string iiwa = read_text(robot_file("urdf/iiwa14.urdf"));
  const std::string task =
    "    joints: [iiwa_joint_1, iiwa_joint_2, iiwa_joint_3, iiwa_joint_4, iiwa_joint_5, iiwa_joint_6, iiwa_joint_7]\n"
    "    frame: iiwa_link_ee\n";
};

TEST_F(TaskSpaceNoAllocation, CartesianImpedanceTargets)
{
  // the hold, a target from ~/target_pose, the rate limit and the wrench saturation, a NaN state
  ParamsFile params(iiwa, task + "    max_force: 20.0\n    max_moment: 5.0\n    max_torque_rate: 1000.0\n");
  Harness<robot_dynamics_control::CartesianImpedanceController> h("cartesian_impedance", params.path(), iiwa);
  h.activate();
  updates(h, 0.0, 5);
  EXPECT_EQ(updates(h, 1.0, 500), 0) << "holding the pose at activation";
  geometry_msgs::msg::PoseStamped target;
  target.pose.position.x = 0.4, target.pose.position.z = 0.8;
  target.pose.orientation.y = 1.0, target.pose.orientation.w = 0.0;  // the tool pointing down
  ASSERT_EQ(h.controller->set_target(target), "");
  EXPECT_EQ(updates(h, 2.0, 500), 0) << "after a target";
  ASSERT_TRUE(h.controller->get_node()
                ->set_parameter(rclcpp::Parameter("stiffness", std::vector<double>{500, 500, 500, 50, 50, 50}))
                .successful);
  EXPECT_EQ(updates(h, 3.0, 100), 0) << "after a stiffness change";
}

TEST_F(TaskSpaceNoAllocation, OperationalSpaceChained)
{
  ParamsFile params(iiwa, task + "    omega: [10.0, 10.0, 10.0, 5.0, 5.0, 5.0]\n");
  Harness<robot_dynamics_control::OperationalSpaceController> h("operational_space", params.path(), iiwa, true);
  h.activate();
  ASSERT_EQ(h.references.size(), 13u);
  const double values[13] = {0.4, 0.0, 0.8, 0.0, 1.0, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.2};
  for (size_t k = 0; k < 13; ++k) {
    h.references[k]->set_value(values[k]);
  }
  updates(h, 0.0, 5);
  EXPECT_EQ(updates(h, 1.0, 1000), 0);
}

TEST_F(TaskSpaceNoAllocation, EveryParameterCartesianImpedance)
{
  ParamsFile params(iiwa, task + "    posture: [0.0, 0.5, 0.0, -1.0, 0.0, 0.5, 0.0]\n");
  Harness<robot_dynamics_control::CartesianImpedanceController> h("cartesian_impedance", params.path(), iiwa);
  h.activate();
  updates(h, 0.0, 5);
  every_parameter(h, 1.0);
}

TEST_F(TaskSpaceNoAllocation, EveryParameterOperationalSpace)
{
  ParamsFile params(iiwa, task + "    kp: [100.0, 100.0, 100.0, 50.0, 50.0, 50.0]\n    kd: [20.0, 20.0, 20.0, 14.0, 14.0, 14.0]\n");
  Harness<robot_dynamics_control::OperationalSpaceController> h("operational_space", params.path(), iiwa);
  h.activate();
  updates(h, 0.0, 5);
  every_parameter(h, 1.0);
}

}  // namespace
