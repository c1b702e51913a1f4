// The defects the fuzz of the controllers found (test_fuzz_controllers.cpp), each in its fewest
// steps (the case and step named in each: the default seed, 42).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "allocation_counter.hpp"
#include "fuzz_support.hpp"

namespace rd_fuzz
{

using robot_dynamics_control::test::count_allocations;

namespace
{
/// Activated on the state `q` (at rest), then 100 updates on a sane state (the middle of the
/// ranges): whether the controller still faults.
template<typename C>
bool faults_after_activation_on(Harness<C> & h, const Robot & robot, const std::vector<double> & q)
{
  h.set_state(q, std::vector<double>(robot.n(), 0.0));
  h.activate();
  h.set_state(middle(robot), std::vector<double>(robot.n(), 0.0));
  for (int k = 0; k < 100; ++k) {
    h.update(1.0 + 0.001 * k);
  }
  return faulting(*h.controller);
}
}  // namespace

TEST_F(FuzzControllers, ReproduceGainsOfAnotherLengthAllocate)
{
  // PdGravityThreeDofGeared, step 138: kd from one value to 2 (any other length does the same);
  // update() copies the parameters into vectors of the old length
  const Robot & robot = three_dof_geared();
  ParamsFile params(robot.urdf, joints_line(robot) + "    drivetrain: " + robot.drivetrain + "\n    kp: [100.0]\n    kd: [10.0]\n");
  Harness<PdGravityController> h("pd_gravity", params.path(), robot.urdf);
  h.set_state(middle(robot), std::vector<double>(robot.n(), 0.0));
  h.activate();
  h.update(1.0);
  const std::vector<double> kd = {10.0, 10.0, 10.0};
  ASSERT_TRUE(h.controller->get_node()->set_parameter(rclcpp::Parameter("kd", kd)).successful);
  EXPECT_EQ(count_allocations([&] { h.update(1.001); }), 0);
}

TEST_F(FuzzControllers, ReproduceNonFiniteGainsAccepted)
{
  // ComputedTorqueThreeDofGeared, steps 48 and 655: kp [nan], omega [..., nan] accepted; the
  // generated validator (lower_element_bounds 0) lets NaN and +inf through
  const Robot & robot = three_dof_geared();
  ParamsFile params(robot.urdf, joints_line(robot));
  Harness<ComputedTorqueController> h("computed_torque", params.path(), robot.urdf);
  auto node = h.controller->get_node();
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("omega", std::vector<double>{kNaN})).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("xi", std::vector<double>{kInf})).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("kp", std::vector<double>{kNaN})).successful);
}

TEST_F(FuzzControllers, ReproduceActivationOnNonFiniteStateLatchesFault)
{
  // PdGravityPuma560, step 1087: activated on a state with q3 = -inf, the goal held is that state:
  // the controller faults on every sane state afterwards, until activated again
  const Robot & robot = puma560();
  ParamsFile params(robot.urdf, joints_line(robot) + "    drivetrain: " + robot.drivetrain + "\n    kp: [100.0]\n    kd: [10.0]\n");
  Harness<PdGravityController> h("pd_gravity", params.path(), robot.urdf);
  auto q = middle(robot);
  q[2] = -kInf;
  EXPECT_FALSE(faults_after_activation_on(h, robot, q));
}

TEST_F(FuzzControllers, ReproduceActivationOnHugeStateLatchesFault)
{
  // ComputedTorqueThreeDofGeared, step 535: activated on q1 = 1e308 (finite), the position held is
  // that state, Kp (q_r - q) overflows: the controller faults on every sane state afterwards
  const Robot & robot = three_dof_geared();
  ParamsFile params(robot.urdf, joints_line(robot));
  Harness<ComputedTorqueController> h("computed_torque", params.path(), robot.urdf);
  auto q = middle(robot);
  q[0] = 1e308;
  EXPECT_FALSE(faults_after_activation_on(h, robot, q));
}

TEST_F(FuzzControllers, ReproduceReadOnlyParameterChangeAccepted)
{
  // GravityCompensationThreeDofGeared, step 124: the read-only joints changed after configure. The
  // controller manager's node options (undeclared parameters allowed, declared from the overrides,
  // as the harness's) declare every parameter of the parameters file before the controller does,
  // and the generated library then leaves its descriptor (read_only) out
  const Robot & robot = three_dof_geared();
  ParamsFile params(robot.urdf, joints_line(robot));
  Harness<GravityCompensationController> h("gravity_compensation", params.path(), robot.urdf);
  auto node = h.controller->get_node();
  const std::vector<std::string> joints = {"joint3", "joint1", "joint2"};
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("joints", joints)).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("robot_model", "text")).successful);
}

TEST_F(FuzzControllers, ReproduceReadOnlyParameterChangeAllocates)
{
  // GravityCompensationThreeDofGeared, step 871: after an accepted change of a read-only parameter
  // of the file (joints, a longer name first), update() copies the parameters into strings and
  // vectors too short for them
  const Robot & robot = three_dof_geared();
  ParamsFile params(robot.urdf, joints_line(robot));
  Harness<GravityCompensationController> h("gravity_compensation", params.path(), robot.urdf);
  h.set_state(middle(robot), std::vector<double>(robot.n(), 0.0));
  h.activate();
  h.update(1.0);
  const std::vector<std::string> joints = {std::string(300, 'j'), "joint1", "joint2", "joint3"};
  EXPECT_FALSE(h.controller->get_node()->set_parameter(rclcpp::Parameter("joints", joints)).successful)
    << "joints is read-only once configured";
  EXPECT_EQ(count_allocations([&] { h.update(1.001); }), 0);
}

TEST_F(FuzzControllers, ReproduceParameterTypeChangeThrows)
{
  // PdGravityPuma560, step 515: a parameter of the file set to another type is let through (declared
  // from the overrides: dynamic typing) and the generated callback throws
  // InvalidParameterTypeException. Through the parameter service, which catches only
  // ParameterNotDeclaredException, that ends the process spinning the controller:
  // `ros2 param set /pd_gravity kp 1.0` ends the controller manager.
  const Robot & robot = puma560();
  ParamsFile params(robot.urdf, joints_line(robot) + "    drivetrain: " + robot.drivetrain + "\n    kp: [100.0]\n    kd: [10.0]\n");
  Harness<PdGravityController> h("pd_gravity", params.path(), robot.urdf);
  rcl_interfaces::msg::SetParametersResult result;
  EXPECT_NO_THROW(result = h.controller->get_node()->set_parameter(rclcpp::Parameter("kp", 1.0)));
  EXPECT_FALSE(result.successful);
}

}  // namespace rd_fuzz
