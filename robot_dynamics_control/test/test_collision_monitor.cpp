// CollisionMonitorController in a closed loop with SimulatedSystem (the PUMA 560, its friction on):
// a PD with gravity compensation written here commands the monitor's effort references, the
// monitor writes the hardware's efforts, the simulated arm gets a known external torque (its
// set_external_torque, what its simulation topic does). The residual follows a constant external
// torque (also when the hardware compensates gravity); a push is detected, isolated, latched into
// the hold or the reflex, and released by the reset; a NaN reference is the stop behaviour.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "controller_harness.hpp"
#include "robot_dynamics_control/collision_monitor_controller.hpp"
#include "robot_dynamics_control/engine_model.hpp"
#include "simulated_system_harness.hpp"
#include "test_files.hpp"

namespace
{
using robot_dynamics_control::CollisionMonitorController;
using robot_dynamics_control::EngineModel;
using namespace robot_dynamics_control::test;  // NOLINT(build/namespaces)

const std::vector<double> kQ0 = {0.1, -0.4, 0.3, 0.2, -0.5, 0.6};
constexpr double kDt = 0.001;

std::string drive() { return robot_file("config/puma560_drivetrain.yaml"); }

class CollisionMonitor : public ::testing::Test
{
protected:
  static void SetUpTestSuite() { rclcpp::init(0, nullptr); }
  static void TearDownTestSuite() { rclcpp::shutdown(); }
};

/// The loop: the simulated arm (1 ms periods, Coulomb friction smoothed over 0.02 rad/s as the
/// monitor's), the monitor on its state, and the law in front of it: gravity compensation plus a
/// PD towards kQ0 (Kp 200, Kd 30), written here on the engine's model.
struct Loop
{
  Loop(const std::string & extra, bool hardware_gravity = false, bool friction = true)
  : sim(puma_with_block(
      param("drivetrain", drive()) + param("coulomb_smoothing", "0.02") + param("friction", friction ? "true" : "false"),
      kQ0)),
    params(read_text(robot_file("urdf/puma560.urdf")),
           "    joints: [joint1, joint2, joint3, joint4, joint5, joint6]\n    drivetrain: " + drive() +
             "\n    friction_smoothing_velocity: 0.02\n    hold_damping: [20.0]\n" + extra +
             (hardware_gravity ? "    gravity_compensated_by_hardware: true\n" : "") +
             (friction ? "" : "    friction: false\n")),
    monitor("collision_monitor", params.path(), read_text(robot_file("urdf/puma560.urdf")), true),
    model(EngineModel::from_text(
      engine_model_text(read_text(robot_file("urdf/puma560.urdf")), drive(), "--strict --allow-no-effort-limit"))),
    hardware_gravity(hardware_gravity)
  {
    monitor.activate();
  }

  /// The gravity torque of the simulated arm's pose.
  std::vector<double> gravity() const
  {
    std::vector<double> g(6), zero(6, 0.0);
    rd_gravity_compensation(&model->model(), sim.hw->positions().data(), zero.data(), 0, g.data(), &model->work());
    return g;
  }

  /// One controller-manager cycle: the plant advances over the last period (read), the law writes
  /// the monitor's references, the monitor updates and writes the hardware's efforts (plus the
  /// gravity torque where the hardware compensates it).
  void cycle(bool nan_reference = false)
  {
    const rclcpp::Duration period(std::chrono::milliseconds(1));
    if (k > 0) {
      ASSERT_EQ(sim.hw->read(rclcpp::Time(k * 1000000), period), hardware_interface::return_type::OK);
    }
    const auto & q = sim.hw->positions();
    const auto & qd = sim.hw->velocities();
    monitor.set_state(q, qd);
    const auto g = gravity();
    for (size_t i = 0; i < 6; ++i) {
      const double law = (hardware_gravity ? 0.0 : g[i]) + 200.0 * (kQ0[i] - q[i]) - 30.0 * qd[i];
      monitor.references[i]->set_value(nan_reference ? std::nan("") : law);
    }
    ASSERT_EQ(monitor.update(1.0 + kDt * static_cast<double>(k)), controller_interface::return_type::OK);
    for (size_t i = 0; i < 6; ++i) {
      sim.commands[i].set_value(monitor.command_values[i] + (hardware_gravity ? g[i] : 0.0));
    }
    ASSERT_EQ(sim.hw->write(rclcpp::Time(k * 1000000), period), hardware_interface::return_type::OK);
    ++k;
  }

  void push(const std::vector<double> & torque)
  {
    sensor_msgs::msg::JointState msg;
    msg.name = kJoints;
    msg.effort = torque;
    ASSERT_EQ(sim.hw->set_external_torque(msg), "");
  }

  const CollisionMonitorController & c() const { return *monitor.controller; }

  Sim sim;
  ParamsFile params;
  Harness<CollisionMonitorController> monitor;
  std::shared_ptr<EngineModel> model;
  bool hardware_gravity;
  int64_t k = 0;
};

void expect_residual_equals(const Loop & loop, const std::vector<double> & torque, double relative)
{
  double largest = 0.0;
  for (double t : torque) {
    largest = std::max(largest, std::abs(t));
  }
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(loop.c().external_torque()[i], torque[i], relative * largest) << "joint " << i + 1;
  }
}

TEST_F(CollisionMonitor, TheResidualEqualsAConstantExternalTorque)
{
  const std::vector<double> torque = {6.0, -9.0, 4.0, 1.5, -0.8, 0.4};  // [N m]
  // friction off in the plant and the observer: the arm comes to rest under the PD; on: its
  // Coulomb friction, smoothed alike in both, leaves it creeping at a few mrad/s after 3 s
  for (bool friction : {false, true}) {
    for (bool hardware_gravity : {false, true}) {
      SCOPED_TRACE(std::string(friction ? "friction on" : "friction off") +
                   (hardware_gravity ? ", gravity compensated by the hardware" : ", gravity in the command"));
      Loop loop("    thresholds: [1000.0]\n", hardware_gravity, friction);  // never a detection here
      loop.push(torque);
      double speed = 0.0;
      for (int t = 0; t < 3000; ++t) {  // 3 s: the arm settles under the PD, the residual after it
        loop.cycle();
      }
      for (double v : loop.sim.hw->velocities()) {
        speed = std::max(speed, std::abs(v));
      }
      EXPECT_FALSE(loop.c().latched());
      if (!friction) {
        EXPECT_LT(speed, 1e-4) << "the arm is at rest";
      }
      expect_residual_equals(loop, torque, friction ? 1e-4 : 1e-6);
      // and it follows its end through the first-order lag: exp(-K_O t) after 20 ms, K_O 100 /s
      loop.push(std::vector<double>(6, 0.0));
      for (int t = 0; t < 20; ++t) {
        loop.cycle();
      }
      for (size_t i = 0; i < 6; ++i) {
        EXPECT_NEAR(loop.c().external_torque()[i], torque[i] * std::exp(-2.0), 0.02 * std::abs(torque[i])) << i;
      }
    }
  }
}

TEST_F(CollisionMonitor, APushIsDetectedIsolatedAndHeldUntilTheReset)
{
  Loop loop("    reaction: hold\n");
  for (int t = 0; t < 500; ++t) {
    loop.cycle();
  }
  ASSERT_FALSE(loop.c().latched()) << "no false alarm while the arm settles";
  ASSERT_TRUE(loop.monitor.controller->request_reset().first);  // nothing latched: nothing to do
  EXPECT_EQ(loop.monitor.controller->request_reset().second, "no collision reaction latched");
  // 10 % of joint 3's effort limit on joint 3 alone: joints 4 to 6 see nothing, so joint 3 is isolated
  const double limit = loop.c().core().limit[2];
  std::vector<double> torque(6, 0.0);
  torque[2] = 0.1 * limit;
  loop.push(torque);
  int ticks = 0;
  while (!loop.c().latched() && ticks < 100) {
    loop.cycle();
    ++ticks;
  }
  ASSERT_TRUE(loop.c().latched()) << "no detection within 100 ms";
  EXPECT_LE(ticks, 6) << "detected " << ticks << " ms after the push began";
  EXPECT_EQ(loop.c().collision_joint(), 2);
  EXPECT_EQ(loop.c().detections(), 1u);
  // the hold from the next cycle on: the gravity torque minus hold_damping qd, whatever the reference
  loop.cycle();
  const auto g = loop.gravity();
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(loop.monitor.command_values[i], g[i] - 20.0 * loop.monitor.state_values[2 * i + 1], 1e-9) << i;
  }
  const std::vector<double> at_detection = loop.sim.hw->positions();
  for (int t = 0; t < 200; ++t) {  // the push goes on for 0.2 s, against the hold's damping alone
    loop.cycle();
  }
  loop.push(std::vector<double>(6, 0.0));  // the push ends: the arm stops where it was pushed to
  for (int t = 0; t < 1000; ++t) {
    loop.cycle();
  }
  EXPECT_TRUE(loop.c().latched()) << "latched until the reset";
  EXPECT_EQ(loop.c().detections(), 1u) << "one detection";
  const std::vector<double> held = loop.sim.hw->positions();
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_LT(std::abs(loop.sim.hw->velocities()[i]), 1e-3) << "joint " << i + 1 << " at rest";
    EXPECT_LT(std::abs(held[i] - at_detection[i]), 0.05) << "joint " << i + 1 << " near its pose at detection";
  }
  for (int t = 0; t < 500; ++t) {
    loop.cycle();
  }
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(loop.sim.hw->positions()[i], held[i], 1e-4) << "joint " << i + 1 << " stays held";
  }
  // the reset: the references pass through again and the PD brings the arm back
  const auto reset = loop.monitor.controller->request_reset();
  EXPECT_TRUE(reset.first);
  loop.cycle();
  EXPECT_FALSE(loop.c().latched());
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_DOUBLE_EQ(loop.monitor.command_values[i], loop.c().reference()[i]) << "passed through";
  }
  for (int t = 0; t < 2000; ++t) {
    loop.cycle();
  }
  EXPECT_FALSE(loop.c().latched()) << "no detection on the way back";
  for (size_t i = 0; i < 6; ++i) {
    // within the PD's friction band: a Coulomb friction Fc leaves Fc / Kp (Kp 200 N m/rad)
    EXPECT_NEAR(loop.sim.hw->positions()[i], kQ0[i], 0.01) << "joint " << i + 1 << " back at the PD's pose";
  }
}

TEST_F(CollisionMonitor, TheReflexYieldsAlongTheResidual)
{
  Loop loop("    reaction: reflex\n    reflex_gain: [0.5]\n");
  for (int t = 0; t < 300; ++t) {
    loop.cycle();
  }
  std::vector<double> torque(6, 0.0);
  torque[1] = 0.1 * loop.c().core().limit[1];
  loop.push(torque);
  for (int t = 0; t < 100 && !loop.c().latched(); ++t) {
    loop.cycle();
  }
  ASSERT_TRUE(loop.c().latched());
  EXPECT_EQ(loop.c().collision_joint(), 1);
  const std::vector<double> r = loop.c().external_torque();
  loop.cycle();
  const auto g = loop.gravity();
  for (size_t i = 0; i < 6; ++i) {  // hold + K_r r, r of the cycle before (within the limits here)
    EXPECT_NEAR(loop.monitor.command_values[i], g[i] - 20.0 * loop.monitor.state_values[2 * i + 1] + 0.5 * r[i], 1e-9);
  }
  EXPECT_GT(r[1] * torque[1], 0.0) << "joint 2 yields along the push";
  EXPECT_GT(std::abs(r[1]), loop.c().threshold()[1] * 0.9) << "the residual that passed the threshold";
}

TEST_F(CollisionMonitor, ANanReferenceIsTheStopBehaviourAndAnUnknownReactionIsRefused)
{
  Loop loop("    stop_behaviour: zero\n");
  loop.cycle(true);
  for (double e : loop.monitor.command_values) {
    EXPECT_EQ(e, 0.0);
  }
  EXPECT_NE(loop.c().core().status() & robot_dynamics_control::TICK_FAULT, 0);
  EXPECT_EQ(loop.c().core().fault_kind(), robot_dynamics_control::Fault::reference);
  EXPECT_EQ(loop.c().core().fault_joint(), 0) << "the first joint without a reference";
  loop.cycle(false);
  EXPECT_EQ(loop.c().core().status() & robot_dynamics_control::TICK_FAULT, 0) << "the fault clears";
  auto node = loop.monitor.controller->get_node();
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("reaction", "dance")).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("gain", std::vector<double>{0.0})).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("thresholds", std::vector<double>{-1.0})).successful);
  ASSERT_TRUE(node->set_parameter(rclcpp::Parameter("thresholds", std::vector<double>{})).successful);
  loop.cycle();
  loop.cycle();
  EXPECT_GE(loop.c().threshold()[0], 0.02 * loop.c().core().limit[0]) << "the default: 2 % of the effort limit";
}

TEST_F(CollisionMonitor, DeactivationAndAFaultHoldTheArm)
{
  // a fault (an infinite position) holds the gravity torque of the last valid pose; deactivation
  // writes the gravity torque of the pose it finds
  Loop loop("");
  for (int k = 0; k < 20; ++k) {
    loop.cycle();
  }
  const std::vector<double> valid = loop.sim.hw->positions();
  const auto held = loop.gravity();
  std::vector<double> bad = valid;
  bad[3] = std::numeric_limits<double>::infinity();
  loop.monitor.set_state(bad, std::vector<double>(6, 0.0));
  ASSERT_EQ(loop.monitor.update(2.0), controller_interface::return_type::OK);
  EXPECT_NE(loop.c().core().status() & robot_dynamics_control::TICK_FAULT, 0);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(loop.monitor.command_values[i], held[i], 1e-9 * (1.0 + std::abs(held[i]))) << "joint " << i + 1;
  }
  loop.monitor.set_state(valid, std::vector<double>(6, 0.2));
  loop.monitor.deactivate();
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(loop.monitor.command_values[i], held[i], 1e-9 * (1.0 + std::abs(held[i]))) << "joint " << i + 1;
  }
}

TEST_F(CollisionMonitor, NanInfAndWrongLengthParametersAreRefused)
{
  Loop loop("");
  auto node = loop.monitor.controller->get_node();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("gain", std::vector<double>{nan})).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("gain", std::vector<double>{inf})).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("thresholds", std::vector<double>{inf})).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("relative", std::vector<double>{nan})).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("hold_damping", std::vector<double>{nan})).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("hold_damping", std::vector<double>{1.0, 2.0})).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("thresholds", std::vector<double>{1.0, 2.0, 3.0})).successful);
  EXPECT_TRUE(node->set_parameter(rclcpp::Parameter("hold_damping", std::vector<double>(6, 2.0))).successful);
  loop.cycle();
  EXPECT_EQ(loop.c().core().status() & robot_dynamics_control::TICK_FAULT, 0) << "a refused value changed nothing";
}

TEST_F(CollisionMonitor, EffortReferencesBeyondTheLimitsAreClipped)
{
  // the monitor's references are efforts: a reference past a joint's effort limit is written at
  // the limit (positions and velocities are the commanding controller's references, clamped there)
  Loop loop("");
  loop.monitor.set_state(loop.sim.hw->positions(), loop.sim.hw->velocities());
  for (size_t i = 0; i < 6; ++i) {
    loop.monitor.references[i]->set_value(i % 2 ? -1e6 : 1e6);
  }
  ASSERT_EQ(loop.monitor.update(1.0), controller_interface::return_type::OK);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(std::abs(loop.monitor.command_values[i]), loop.c().core().limit[i]) << "joint " << i + 1;
  }
}

}  // namespace
