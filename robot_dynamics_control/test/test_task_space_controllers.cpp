// CartesianImpedanceController and OperationalSpaceController in a closed loop with SimulatedSystem
// (the 7-joint iiwa14, its viscous friction on): a 10 N push at the tool (the external joint torque
// J^T F of the tool's Jacobian, recomputed here each cycle from the test's own model and given
// through the simulation's external-torque input) moves the tool by F / K and leaves the joints at
// rest; a step of the target pose overshoots as the damping ratio predicts; the chained reference
// interfaces and ~/target_pose set the target, bad targets and parameters are refused; near a
// singularity the command stays bounded; a target past a joint limit leaves the joints inside their limits
// (the joint-limit barrier); deactivation holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "controller_harness.hpp"
#include "hardware_interface/component_parser.hpp"
#include "rclcpp_lifecycle/state.hpp"
#include "robot_dynamics_control/cartesian_impedance_controller.hpp"
#include "robot_dynamics_control/collision_monitor_controller.hpp"
#include "robot_dynamics_control/computed_torque_controller.hpp"
#include "robot_dynamics_control/engine_model.hpp"
#include "robot_dynamics_control/gravity_compensation_controller.hpp"
#include "robot_dynamics_control/operational_space_controller.hpp"
#include "robot_dynamics_control/pd_gravity_controller.hpp"
#include "robot_dynamics_control/simulated_system.hpp"
#include "robot_dynamics_interfaces/msg/controller_state.hpp"
#include "test_files.hpp"

namespace
{
using robot_dynamics_control::CartesianImpedanceController;
using robot_dynamics_control::EngineModel;
using robot_dynamics_control::OperationalSpaceController;
using robot_dynamics_control::SimulatedSystem;
using namespace robot_dynamics_control::test;  // NOLINT(build/namespaces)

const std::vector<std::string> kJoints = {"iiwa_joint_1", "iiwa_joint_2", "iiwa_joint_3", "iiwa_joint_4",
                                          "iiwa_joint_5", "iiwa_joint_6", "iiwa_joint_7"};
const std::vector<double> kBent = {0.0, 0.6, 0.0, -1.2, 0.0, 0.9, 0.0};
constexpr double kDt = 0.001;
constexpr const char * kTool = "iiwa_link_ee";

std::string urdf() { return read_text(robot_file("urdf/iiwa14.urdf")); }
std::string model_text() { return engine_model_text(urdf(), "", "--strict"); }

/// The iiwa14 with a <ros2_control> block for SimulatedSystem starting at `q0`.
std::string iiwa_with_block(const std::vector<double> & q0)
{
  std::ostringstream b;
  b.precision(17);
  b << "<ros2_control name=\"iiwa14\" type=\"system\"><hardware><plugin>robot_dynamics_control/SimulatedSystem"
    << "</plugin><param name=\"robot_model\">" << model_text() << "</param></hardware>";
  for (size_t i = 0; i < kJoints.size(); ++i) {
    b << "<joint name=\"" << kJoints[i] << "\"><command_interface name=\"effort\"/>"
      << "<state_interface name=\"position\"><param name=\"initial_value\">" << q0[i] << "</param></state_interface>"
      << "<state_interface name=\"velocity\"/><state_interface name=\"effort\"/></joint>";
  }
  b << "</ros2_control>";
  const std::string text = urdf();
  return text.substr(0, text.rfind("</robot>")) + b.str() + "\n</robot>\n";
}

class TaskSpace : public ::testing::Test
{
protected:
  static void SetUpTestSuite() { rclcpp::init(0, nullptr); }
  static void TearDownTestSuite() { rclcpp::shutdown(); }
};

std::string joints_yaml()
{
  std::string s = "    joints: [";
  for (size_t i = 0; i < kJoints.size(); ++i) {
    s += (i ? ", " : "") + kJoints[i];
  }
  return s + "]\n    frame: " + kTool + "\n";
}

/// The loop: the simulated iiwa14 (1 ms periods), the controller on its state writing its efforts.
template<typename Controller>
struct Loop
{
  explicit Loop(const std::string & extra, const std::vector<double> & q0 = kBent, bool chained = false)
  : params(urdf(), joints_yaml() + extra),
    controller("task_space_controller", params.path(), urdf(), chained),
    model(EngineModel::from_text(model_text()))
  {
    hw = std::make_unique<SimulatedSystem>();
    if (hw->on_init(hardware_interface::parse_control_resources_from_urdf(iiwa_with_block(q0)).at(0)) !=
        SimulatedSystem::CallbackReturn::SUCCESS) {
      throw std::runtime_error("SimulatedSystem on_init failed");
    }
    states = hw->export_state_interfaces();
    commands = hw->export_command_interfaces();
    hw->on_activate(rclcpp_lifecycle::State());
    controller.set_state(hw->positions(), hw->velocities());
    controller.activate();
  }

  /// The tool's pose T (4 x 4, row-major) and Jacobian (6 x 7, base axes) at the simulated state.
  void tool(std::vector<double> & T, std::vector<double> * J = nullptr)
  {
    T.assign(16, 0.0);
    if (J) {
      J->assign(42, 0.0);
    }
    const rd_input in{hw->positions().data(), hw->velocities().data(), nullptr, nullptr, nullptr, 0};
    const rd_task task{model->frame_index(kTool), RD_LOCAL_WORLD_ALIGNED, 0, 0.0};
    rd_task_space_out out{};
    out.T = T.data();
    out.J = J ? J->data() : nullptr;
    ASSERT_EQ(rd_task_space(&model->model(), &in, &task, &out, &model->work()), RD_OK);
  }

  /// The external joint torque J^T [force; 0] of a force [N] at the tool's origin, base axes.
  void push(const double force[3])
  {
    std::vector<double> T, J;
    tool(T, &J);
    sensor_msgs::msg::JointState msg;
    msg.name = kJoints;
    msg.effort.assign(7, 0.0);
    for (size_t k = 0; k < 7; ++k) {
      for (size_t r = 0; r < 3; ++r) {
        msg.effort[k] += J[r * 7 + k] * force[r];
      }
    }
    ASSERT_EQ(hw->set_external_torque(msg), "");
  }

  /// One controller-manager cycle: the plant advances over the last period, the controller updates.
  void cycle()
  {
    const rclcpp::Duration period(std::chrono::milliseconds(1));
    if (k > 0) {
      ASSERT_EQ(hw->read(rclcpp::Time(k * 1000000), period), hardware_interface::return_type::OK);
    }
    controller.set_state(hw->positions(), hw->velocities());
    ASSERT_EQ(controller.update(1.0 + kDt * static_cast<double>(k)), controller_interface::return_type::OK);
    for (size_t i = 0; i < 7; ++i) {
      commands[i].set_value(controller.command_values[i]);
    }
    ASSERT_EQ(hw->write(rclcpp::Time(k * 1000000), period), hardware_interface::return_type::OK);
    ++k;
  }

  /// `seconds` of cycles, with the force `force` pushing the tool (recomputed each cycle) if given.
  void run(double seconds, const double * force = nullptr)
  {
    const auto n = static_cast<int>(std::lround(seconds / kDt));
    for (int i = 0; i < n; ++i) {
      if (force) {
        push(force);
      }
      cycle();
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }

  double largest_speed() const
  {
    double v = 0.0;
    for (double x : hw->velocities()) {
      v = std::max(v, std::abs(x));
    }
    return v;
  }

  ParamsFile params;
  Harness<Controller> controller;
  std::shared_ptr<EngineModel> model;
  std::unique_ptr<SimulatedSystem> hw;
  std::vector<hardware_interface::StateInterface> states;
  std::vector<hardware_interface::CommandInterface> commands;
  int64_t k = 0;
};

geometry_msgs::msg::PoseStamped pose_of(const std::vector<double> & T, double dz = 0.0)
{
  geometry_msgs::msg::PoseStamped msg;
  msg.pose.position.x = T[3];
  msg.pose.position.y = T[7];
  msg.pose.position.z = T[11] + dz;
  // the quaternion of T's rotation (Shepperd's method: the largest of w, x, y, z first)
  const double r00 = T[0], r11 = T[5], r22 = T[10];
  const double w4 = 1.0 + r00 + r11 + r22, x4 = 1.0 + r00 - r11 - r22, y4 = 1.0 - r00 + r11 - r22,
               z4 = 1.0 - r00 - r11 + r22;
  auto & o = msg.pose.orientation;
  if (w4 >= std::max({x4, y4, z4})) {
    const double s = 2.0 * std::sqrt(w4);
    o.w = 0.25 * s, o.x = (T[9] - T[6]) / s, o.y = (T[2] - T[8]) / s, o.z = (T[4] - T[1]) / s;
  } else if (x4 >= std::max(y4, z4)) {
    const double s = 2.0 * std::sqrt(x4);
    o.w = (T[9] - T[6]) / s, o.x = 0.25 * s, o.y = (T[1] + T[4]) / s, o.z = (T[2] + T[8]) / s;
  } else if (y4 >= z4) {
    const double s = 2.0 * std::sqrt(y4);
    o.w = (T[2] - T[8]) / s, o.x = (T[1] + T[4]) / s, o.y = 0.25 * s, o.z = (T[6] + T[9]) / s;
  } else {
    const double s = 2.0 * std::sqrt(z4);
    o.w = (T[4] - T[1]) / s, o.x = (T[2] + T[8]) / s, o.y = (T[6] + T[9]) / s, o.z = 0.25 * s;
  }
  return msg;
}

TEST_F(TaskSpace, APushMovesTheToolByForceOverStiffnessAndTheJointsComeToRest)
{
  Loop<CartesianImpedanceController> loop("    stiffness: [1000.0, 1000.0, 1000.0, 100.0, 100.0, 100.0]\n");
  loop.run(0.5);
  std::vector<double> T0, T1;
  loop.tool(T0);
  const double force[3] = {10.0, 0.0, 0.0};
  loop.run(3.0, force);
  ASSERT_FALSE(HasFatalFailure());
  loop.tool(T1);
  const double dx = T1[3] - T0[3], dy = T1[7] - T0[7], dz = T1[11] - T0[11];
  EXPECT_NEAR(dx, 0.010, 0.05 * 0.010) << "F / K = 10 mm";
  EXPECT_LT(std::abs(dy), 0.1 * 0.010);
  EXPECT_LT(std::abs(dz), 0.1 * 0.010);
  EXPECT_LT(loop.largest_speed(), 1e-3) << "the joints at rest: the null space held";
  EXPECT_EQ(loop.controller.controller->core().status() & robot_dynamics_control::TICK_FAULT, 0);
  // released: back to the held pose
  const double none[3] = {0.0, 0.0, 0.0};
  loop.run(3.0, none);
  loop.tool(T1);
  EXPECT_NEAR(T1[3], T0[3], 2e-4);
}

/// The modes of K phi = w^2 Lambda phi (K diagonal, Lambda symmetric positive definite, 6 x 6
/// row-major): w2 ascending and Phi's columns (Lambda-orthonormal), by Lambda = L L^T and cyclic Jacobi
/// rotations of S = L^-1 K L^-T (a second derivation of the controller's damping design).
void modes(const double K[6], const std::vector<double> & Lambda, double Phi[36], double w2[6])
{
  double L[36] = {0}, Li[36] = {0}, S[36] = {0}, U[36] = {0};
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j <= i; ++j) {
      double v = Lambda[static_cast<size_t>(6 * i + j)];
      for (int k = 0; k < j; ++k) {
        v -= L[6 * i + k] * L[6 * j + k];
      }
      L[6 * i + j] = i == j ? std::sqrt(v) : v / L[6 * j + j];
    }
  }
  for (int c = 0; c < 6; ++c) {  // Li = L^-1 by forward substitution
    for (int i = 0; i < 6; ++i) {
      double v = i == c ? 1.0 : 0.0;
      for (int k = 0; k < i; ++k) {
        v -= L[6 * i + k] * Li[6 * k + c];
      }
      Li[6 * i + c] = v / L[6 * i + i];
    }
  }
  for (int i = 0; i < 6; ++i) {
    U[6 * i + i] = 1.0;
    for (int j = 0; j < 6; ++j) {
      for (int k = 0; k < 6; ++k) {
        S[6 * i + j] += Li[6 * i + k] * K[k] * Li[6 * j + k];
      }
    }
  }
  for (int sweep = 0; sweep < 50; ++sweep) {
    for (int p = 0; p < 5; ++p) {
      for (int q = p + 1; q < 6; ++q) {
        if (std::abs(S[6 * p + q]) < 1e-300) {
          continue;
        }
        const double theta = 0.5 * std::atan2(2.0 * S[6 * p + q], S[6 * q + q] - S[6 * p + p]);
        const double c = std::cos(theta), sn = std::sin(theta);
        for (int k = 0; k < 6; ++k) {  // S R, then R^T S; U R
          const double a = S[6 * k + p], b = S[6 * k + q];
          S[6 * k + p] = c * a - sn * b, S[6 * k + q] = sn * a + c * b;
          const double u = U[6 * k + p], v = U[6 * k + q];
          U[6 * k + p] = c * u - sn * v, U[6 * k + q] = sn * u + c * v;
        }
        for (int k = 0; k < 6; ++k) {
          const double a = S[6 * p + k], b = S[6 * q + k];
          S[6 * p + k] = c * a - sn * b, S[6 * q + k] = sn * a + c * b;
        }
      }
    }
  }
  int order[6] = {0, 1, 2, 3, 4, 5};
  std::sort(order, order + 6, [&](int a, int b) { return S[7 * a] < S[7 * b]; });
  for (int m = 0; m < 6; ++m) {
    w2[m] = S[7 * order[m]];
    for (int i = 0; i < 6; ++i) {  // Phi = L^-T U
      double v = 0.0;
      for (int k = 0; k < 6; ++k) {
        v += Li[6 * k + i] * U[6 * k + order[m]];
      }
      Phi[6 * i + m] = v;
    }
  }
}

/// T moved by the task step [dp; dtheta] (base axes): p + dp, exp(dtheta) R.
std::vector<double> moved(const std::vector<double> & T, const double step[6])
{
  const double th = std::sqrt(step[3] * step[3] + step[4] * step[4] + step[5] * step[5]);
  const double k[3] = {step[3] / th, step[4] / th, step[5] / th}, c = std::cos(th), s = std::sin(th);
  double R[9];
  for (int i = 0; i < 3; ++i) {  // Rodrigues
    for (int j = 0; j < 3; ++j) {
      R[3 * i + j] = (i == j ? c : 0.0) + (1.0 - c) * k[i] * k[j];
    }
  }
  R[1] -= s * k[2], R[2] += s * k[1], R[3] += s * k[2], R[5] -= s * k[0], R[6] -= s * k[1], R[7] += s * k[0];
  std::vector<double> out = T;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      out[static_cast<size_t>(4 * i + j)] = R[3 * i] * T[static_cast<size_t>(j)] + R[3 * i + 1] * T[static_cast<size_t>(4 + j)] +
                                            R[3 * i + 2] * T[static_cast<size_t>(8 + j)];
    }
    out[static_cast<size_t>(4 * i + 3)] += step[i];
  }
  return out;
}

/// The task error [p_d - p; theta] of T against the target Td, theta = vee(Rd R^T - R Rd^T) / 2 (the
/// rotation's log to third order in its angle: below 1e-8 rad at the 3 mrad steps here).
void task_error(const std::vector<double> & Td, const std::vector<double> & T, double e[6])
{
  double M[9] = {0};
  for (int i = 0; i < 3; ++i) {
    e[i] = Td[static_cast<size_t>(4 * i + 3)] - T[static_cast<size_t>(4 * i + 3)];
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 3; ++k) {
        M[3 * i + j] += Td[static_cast<size_t>(4 * i + k)] * T[static_cast<size_t>(4 * j + k)];
      }
    }
  }
  e[3] = 0.5 * (M[7] - M[5]), e[4] = 0.5 * (M[2] - M[6]), e[5] = 0.5 * (M[3] - M[1]);
}

TEST_F(TaskSpace, AStepOfTheTargetOvershootsAsTheDampingRatioPredicts)
{
  // a 3 mm step along a mode of K phi = w^2 Lambda phi: the overshoot of a second-order system of
  // the damping ratio, exp(-pi zeta / sqrt(1 - zeta^2)), within 5 % of itself
  const double K[6] = {1000.0, 1000.0, 1000.0, 100.0, 100.0, 100.0};
  for (double zeta : {0.5, 0.7}) {
    for (int mode : {0, 2}) {
      Loop<CartesianImpedanceController> loop(
        "    stiffness: [1000.0, 1000.0, 1000.0, 100.0, 100.0, 100.0]\n    damping_ratio: " + std::to_string(zeta) +
        "\n");
      loop.run(0.3);
      std::vector<double> T0, T, Lambda(36);
      loop.tool(T0);
      {
        const rd_input in{loop.hw->positions().data(), loop.hw->velocities().data(), nullptr, nullptr, nullptr, 0};
        const rd_task task{loop.model->frame_index(kTool), RD_LOCAL_WORLD_ALIGNED, 0, 0.0};
        rd_task_space_out out{};
        out.Lambda = Lambda.data();
        ASSERT_EQ(rd_task_space(&loop.model->model(), &in, &task, &out, &loop.model->work()), RD_OK);
      }
      double Phi[36], w2[6], step[6], largest = 0.0;
      modes(K, Lambda, Phi, w2);
      for (int i = 0; i < 6; ++i) {
        largest = std::max(largest, std::abs(Phi[6 * i + mode]));
      }
      double norm2 = 0.0;
      for (int i = 0; i < 6; ++i) {
        step[i] = 0.003 * Phi[6 * i + mode] / largest;
        norm2 += step[i] * step[i];
      }
      const auto T1 = moved(T0, step);
      ASSERT_EQ(loop.controller.controller->set_target(pose_of(T1)), "");
      double peak = 0.0, progress = 0.0;
      for (int i = 0; i < 1500; ++i) {
        loop.cycle();
        ASSERT_FALSE(HasFatalFailure());
        loop.tool(T);
        double e[6], dot = 0.0;
        task_error(T1, T, e);
        for (int r = 0; r < 6; ++r) {
          dot += e[r] * step[r];
        }
        progress = 1.0 - dot / norm2;  // 0 at the start, 1 on the target
        peak = std::max(peak, progress);
      }
      const double predicted = std::exp(-M_PI * zeta / std::sqrt(1.0 - zeta * zeta));
      EXPECT_NEAR((peak - 1.0) / predicted, 1.0, 0.05)
        << "zeta " << zeta << ", mode " << mode << " (w " << std::sqrt(w2[mode]) << " rad/s): overshoot " << peak - 1.0
        << ", predicted " << predicted;
      EXPECT_NEAR(progress, 1.0, 1e-3) << "settled at the target";
      std::printf("zeta %.1f, mode %d: overshoot %.5f, predicted %.5f (ratio %.4f)\n", zeta, mode, peak - 1.0, predicted,
                  (peak - 1.0) / predicted);
    }
  }
}

TEST_F(TaskSpace, OperationalSpaceControlReachesAStepWithoutOvershootAtCriticalDamping)
{
  Loop<OperationalSpaceController> loop("    omega: [20.0, 20.0, 20.0, 20.0, 20.0, 20.0]\n");
  loop.run(0.3);
  std::vector<double> T0, T;
  loop.tool(T0);
  ASSERT_EQ(loop.controller.controller->set_target(pose_of(T0, 0.02)), "");
  double peak = 0.0;
  for (int i = 0; i < 1000; ++i) {
    loop.cycle();
    ASSERT_FALSE(HasFatalFailure());
    loop.tool(T);
    peak = std::max(peak, T[11] - T0[11]);
  }
  EXPECT_LT(peak, 0.02 * 1.01) << "xi = 1: no overshoot beyond the model's friction and sampling";
  EXPECT_NEAR(T[11] - T0[11], 0.02, 2e-4);
  EXPECT_NEAR(T[3], T0[3], 2e-4);
}

TEST_F(TaskSpace, TheChainedReferenceInterfacesSetTheTargetAndNaNHolds)
{
  Loop<CartesianImpedanceController> loop("", kBent, true);
  ASSERT_EQ(loop.controller.references.size(), 13u);
  EXPECT_EQ(loop.controller.references[0]->get_name(), std::string("task_space_controller/") + kTool + "/position.x");
  EXPECT_EQ(loop.controller.references[6]->get_name(), std::string("task_space_controller/") + kTool + "/orientation.w");
  loop.run(0.2);  // NaN references: the hold
  std::vector<double> T0, T;
  loop.tool(T0);
  EXPECT_LT(loop.largest_speed(), 1e-3);
  const auto msg = pose_of(T0, 0.01);
  const double values[7] = {msg.pose.position.x, msg.pose.position.y, msg.pose.position.z, msg.pose.orientation.x,
                            msg.pose.orientation.y, msg.pose.orientation.z, msg.pose.orientation.w};
  for (size_t i = 0; i < 7; ++i) {
    loop.controller.references[i]->set_value(values[i]);
  }
  loop.run(2.0);
  loop.tool(T);
  EXPECT_NEAR(T[11] - T0[11], 0.01, 1e-4);
  EXPECT_NEAR(loop.controller.controller->applied_target().T[11], T0[11] + 0.01, 1e-12);
}

TEST_F(TaskSpace, BadTargetsAreRefusedWithTheirReason)
{
  Loop<CartesianImpedanceController> loop("");
  loop.run(0.05);
  std::vector<double> T0;
  loop.tool(T0);
  auto & c = *loop.controller.controller;
  auto msg = pose_of(T0);
  msg.header.frame_id = "iiwa_link_3";
  EXPECT_NE(c.set_target(msg).find("is not the base"), std::string::npos);
  msg.header.frame_id = "";
  msg.pose.orientation = geometry_msgs::msg::Quaternion();
  msg.pose.orientation.w = 0.0;
  EXPECT_NE(c.set_target(msg).find("not a unit quaternion"), std::string::npos);
  msg = pose_of(T0);
  msg.pose.position.y = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(c.set_target(msg).find("not finite"), std::string::npos);
  msg = pose_of(T0);
  msg.header.frame_id = "iiwa_link_0";  // fixed to the base: accepted
  EXPECT_EQ(c.set_target(msg), "");
  loop.run(0.5);
  EXPECT_LT(loop.largest_speed(), 1e-2);
}

TEST_F(TaskSpace, StiffnessIsValidatedAndChangeableWhileRunning)
{
  Loop<CartesianImpedanceController> loop("    stiffness: [1000.0, 1000.0, 1000.0, 100.0, 100.0, 100.0]\n");
  auto node = loop.controller.controller->get_node();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("stiffness", std::vector<double>{nan, 1, 1, 1, 1, 1})).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("stiffness", std::vector<double>{0, 1, 1, 1, 1, 1})).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("stiffness", std::vector<double>{1, 1, 1})).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("damping_ratio", -0.5)).successful);
  EXPECT_FALSE(node->set_parameter(rclcpp::Parameter("frame", std::string("iiwa_link_3"))).successful);
  EXPECT_TRUE(
    node->set_parameter(rclcpp::Parameter("stiffness", std::vector<double>{500.0, 1000.0, 1000.0, 100.0, 100.0, 100.0}))
      .successful);
  loop.run(0.5);
  std::vector<double> T0, T1;
  loop.tool(T0);
  const double force[3] = {10.0, 0.0, 0.0};
  loop.run(3.0, force);
  loop.tool(T1);
  EXPECT_NEAR(T1[3] - T0[3], 0.020, 0.05 * 0.020) << "10 N on 500 N/m";
}

TEST_F(TaskSpace, NearASingularityTheCommandStaysBounded)
{
  // the arm stretched straight up: joints 1, 3, 5 and 7 on one line, the Jacobian's rank 5
  const std::vector<double> straight = {0.0, 0.01, 0.0, -0.01, 0.0, 0.01, 0.0};
  Loop<CartesianImpedanceController> loop("    max_force: 50.0\n    max_moment: 10.0\n", straight);
  std::vector<double> T0;
  loop.tool(T0);
  auto msg = pose_of(T0);
  msg.pose.position.x += 0.05;
  ASSERT_EQ(loop.controller.controller->set_target(msg), "");
  double largest = 0.0;
  bool singular = false;
  for (int i = 0; i < 500; ++i) {
    loop.cycle();
    ASSERT_FALSE(HasFatalFailure());
    singular = singular || loop.controller.controller->info().singular;
    for (double t : loop.controller.command_values) {
      ASSERT_TRUE(std::isfinite(t));
      largest = std::max(largest, std::abs(t));
    }
  }
  EXPECT_TRUE(singular) << "the task inertia was damped";
  // bounded by the gravity torque (below 100 N m on this arm) and the wrench's 50 N over the reach
  EXPECT_LT(largest, 150.0);
}

TEST_F(TaskSpace, CommandJointsMustNameTheirOwnJointsOnce)
{
  // the efforts of joints 1 and 2 sent to each other's interfaces: refused at configuration
  EXPECT_THROW(Loop<CartesianImpedanceController>(
                 "    command_joints: [iiwa_joint_2, iiwa_joint_1, iiwa_joint_3, iiwa_joint_4, iiwa_joint_5, "
                 "iiwa_joint_6, iiwa_joint_7]\n"),
               std::runtime_error);
  EXPECT_THROW(Loop<CartesianImpedanceController>(
                 "    command_joints: [m/iiwa_joint_1, m/iiwa_joint_1, m/iiwa_joint_3, m/iiwa_joint_4, m/iiwa_joint_5, "
                 "m/iiwa_joint_6, m/iiwa_joint_7]\n"),
               std::runtime_error);
}

/// Stretched straight up without the singular damping: the task inertia does not exist, the law fails
/// (RD_TASK_SINGULAR), the stop behaviour holds the gravity torque of the pose and the arm stays there.
template<typename Controller>
void a_fault_holds_the_gravity_torque_of_the_pose()
{
  const std::vector<double> straight(7, 0.0);
  Loop<Controller> loop("    singular_damping: 0.0\n    singular_threshold: 0.0\n", straight);
  loop.cycle();
  const auto & c = *loop.controller.controller;
  EXPECT_NE(c.core().status() & robot_dynamics_control::TICK_FAULT, 0);
  EXPECT_EQ(c.core().fault_kind(), robot_dynamics_control::Fault::law);
  std::vector<double> g(7), zero(7, 0.0);
  rd_gravity_compensation(&loop.model->model(), straight.data(), zero.data(), 0, g.data(), &loop.model->work());
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_NEAR(loop.controller.command_values[i], g[i], 1e-9) << "joint " << i;
  }
  loop.run(1.0);
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_NEAR(loop.hw->positions()[i], 0.0, 1e-3) << "held where it was";
  }
}

TEST_F(TaskSpace, AFaultHoldsTheGravityTorqueOfThePose)
{
  a_fault_holds_the_gravity_torque_of_the_pose<CartesianImpedanceController>();
  a_fault_holds_the_gravity_torque_of_the_pose<OperationalSpaceController>();
}

TEST_F(TaskSpace, AFaultHoldOfAMovingArmBrakesItWithoutOscillation)
{
  // any controller of the package (here computed torque): a push past max_tracking_error latches
  // the hold, the gravity torque minus hold_damping qd, while the wrist spins. The iiwa14's flange
  // joint has A_77 = 0.001 kg m^2, where the default hold_damping of 5 N m s/rad, computed from one
  // read and held for a 1 ms period, would reverse its speed fourfold each period (1 - 5 dt / A_77
  // = -4): the hold damps joint j by at most A_jj / (2 period)
  Loop<robot_dynamics_control::ComputedTorqueController> loop(
    "    kp: [100.0]\n    kd: [20.0]\n    max_tracking_error: [0.05]\n");
  sensor_msgs::msg::JointState msg;
  msg.name = kJoints;
  msg.effort = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.3};  // spins the flange [N m]
  ASSERT_EQ(loop.hw->set_external_torque(msg), "");
  loop.run(0.3);
  const auto & core = loop.controller.controller->core();
  EXPECT_EQ(core.fault_kind(), robot_dynamics_control::Fault::tracking);
  EXPECT_NE(core.status() & robot_dynamics_control::TICK_FAULT, 0);
  const double spinning = std::abs(loop.hw->velocities()[6]);
  const rd_joint & flange = loop.model->model().joint[6];  // the plant's friction: viscous Fv, Coulomb Fc
  const double steady = (0.3 - flange.Fc) / (0.5 + flange.Fv);
  EXPECT_NEAR(spinning, steady, 0.05 * steady) << "the pushed flange against the hold's capped damping, 0.5 N m s/rad";
  msg.effort.assign(7, 0.0);
  ASSERT_EQ(loop.hw->set_external_torque(msg), "");
  double largest = 0.0;
  for (int i = 0; i < 200; ++i) {
    loop.cycle();
    largest = std::max(largest, loop.largest_speed());
  }
  EXPECT_LE(largest, spinning) << "released, no joint speeds up";
  EXPECT_LT(std::abs(loop.hw->velocities()[6]), 1e-6 * spinning) << "the hold brought the flange to rest";
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_LE(loop.hw->positions()[i], core.upper[i]) << "joint " << i;
    EXPECT_GE(loop.hw->positions()[i], core.lower[i]) << "joint " << i;
  }
}

/// The first ~/controller_state of a controller named `name` (its parameters `extra` beside the
/// iiwa14's joints and tool), updated on the bent pose every 10 ms from t = 1 s: the message,
/// received by a node of its own within 5 s of updates, or nothing. The activation's own update
/// ran at the node's clock, far after t = 1 s: the state is published again when time goes back.
template<typename Controller>
std::shared_ptr<robot_dynamics_interfaces::msg::ControllerState> first_state(
  const std::string & name, const std::string & extra)
{
  using StateMsg = robot_dynamics_interfaces::msg::ControllerState;
  ParamsFile params(urdf(), joints_yaml() + extra);
  Harness<Controller> h(name, params.path(), urdf());
  h.set_state(kBent, std::vector<double>(7, 0.0));
  h.activate();
  auto listener = std::make_shared<rclcpp::Node>(name + "_listener");
  std::shared_ptr<StateMsg> got;
  auto subscription = listener->create_subscription<StateMsg>(
    "/" + name + "/controller_state", rclcpp::SystemDefaultsQoS(), [&got](StateMsg::SharedPtr m) { got = m; });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (int k = 0; !got && std::chrono::steady_clock::now() < deadline; ++k) {
    h.set_state(kBent, std::vector<double>(7, 0.0));
    EXPECT_EQ(h.update(1.0 + 0.01 * k), controller_interface::return_type::OK);
    rclcpp::spin_some(h.controller->get_node()->get_node_base_interface());
    rclcpp::spin_some(listener);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return got;
}

TEST_F(TaskSpace, EveryControllerPublishesItsState)
{
  // the six controllers of the package on the iiwa14: joints, fed-back positions and efforts
  const auto check = [](const std::shared_ptr<robot_dynamics_interfaces::msg::ControllerState> & m,
                        const std::string & name) {
    ASSERT_TRUE(m) << name << ": nothing on ~/controller_state";
    EXPECT_EQ(m->joint_names, kJoints) << name;
    ASSERT_EQ(m->feedback_positions.size(), 7u) << name;
    ASSERT_EQ(m->effort.size(), 7u) << name;
    for (size_t i = 0; i < 7; ++i) {
      EXPECT_DOUBLE_EQ(m->feedback_positions[i], kBent[i]) << name << " joint " << i;
      EXPECT_TRUE(std::isfinite(m->effort[i])) << name << " joint " << i;
    }
  };
  check(first_state<robot_dynamics_control::GravityCompensationController>("gravity_compensation", ""), "gravity");
  check(first_state<robot_dynamics_control::PdGravityController>("pd_gravity", "    kp: [100.0]\n    kd: [5.0]\n"), "pd");
  check(first_state<robot_dynamics_control::ComputedTorqueController>("computed_torque", "    kp: [100.0]\n    kd: [20.0]\n"),
        "computed torque");
  check(first_state<robot_dynamics_control::CollisionMonitorController>("collision_monitor", ""), "collision monitor");
  check(first_state<CartesianImpedanceController>("cartesian_impedance", ""), "cartesian impedance");
  check(first_state<OperationalSpaceController>("operational_space", ""), "operational space");
}

TEST_F(TaskSpace, NaNInfAndWrongLengthParametersAreRefused)
{
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Loop<CartesianImpedanceController> loop("");
  auto node = loop.controller.controller->get_node();
  auto refused = [&](const rclcpp::Parameter & p) { return !node->set_parameter(p).successful; };
  EXPECT_TRUE(refused(rclcpp::Parameter("stiffness", std::vector<double>{inf, 1, 1, 1, 1, 1})));
  EXPECT_TRUE(refused(rclcpp::Parameter("damping_ratio", inf)));
  EXPECT_TRUE(refused(rclcpp::Parameter("damping_ratio", nan)));
  EXPECT_TRUE(refused(rclcpp::Parameter("null_space_stiffness", std::vector<double>{1.0, 2.0, 3.0})));
  EXPECT_TRUE(refused(rclcpp::Parameter("null_space_stiffness", std::vector<double>{inf})));
  EXPECT_TRUE(refused(rclcpp::Parameter("posture", std::vector<double>{0.0, 0.1})));
  EXPECT_TRUE(refused(rclcpp::Parameter("posture", std::vector<double>(7, nan))));
  EXPECT_TRUE(refused(rclcpp::Parameter("max_force", nan)));
  EXPECT_TRUE(refused(rclcpp::Parameter("max_torque_rate", inf)));
  EXPECT_TRUE(refused(rclcpp::Parameter("hold_damping", std::vector<double>{1.0, 2.0})));
  EXPECT_TRUE(refused(rclcpp::Parameter("joint_limit_margin", nan)));
  EXPECT_TRUE(refused(rclcpp::Parameter("joint_limit_margin", inf)));
  EXPECT_TRUE(refused(rclcpp::Parameter("joint_limit_margin", -0.1)));
  EXPECT_TRUE(refused(rclcpp::Parameter("joint_limit_frequency", 0.0)));
  EXPECT_TRUE(refused(rclcpp::Parameter("joint_limit_frequency", inf)));
  Loop<OperationalSpaceController> osc("");
  auto osc_node = osc.controller.controller->get_node();
  EXPECT_FALSE(osc_node->set_parameter(rclcpp::Parameter("kp", std::vector<double>(5, 10.0))).successful);
  EXPECT_FALSE(osc_node->set_parameter(rclcpp::Parameter("omega", std::vector<double>{inf, 1, 1, 1, 1, 1})).successful);
  EXPECT_FALSE(osc_node->set_parameter(rclcpp::Parameter("xi", std::vector<double>{1.0})).successful);
  loop.run(0.2);  // still running on its configured values
  EXPECT_EQ(loop.controller.controller->core().status() & robot_dynamics_control::TICK_FAULT, 0);
}

TEST_F(TaskSpace, APostureBeyondTheLimitsIsHeldAtThem)
{
  // the null-space posture is a joint reference: 5 rad is clamped to each joint's upper limit
  Loop<CartesianImpedanceController> loop("    posture: [5.0]\n    null_space_stiffness: [50.0]\n");
  loop.run(3.0);
  const auto & c = loop.controller.controller->core();
  for (int k = 0; k < 7; ++k) {
    EXPECT_LE(loop.hw->positions()[static_cast<size_t>(k)], c.upper[static_cast<size_t>(k)]) << "joint " << k;
    EXPECT_GE(loop.hw->positions()[static_cast<size_t>(k)], c.lower[static_cast<size_t>(k)]) << "joint " << k;
  }
}

/// How far the simulated joints got past their position limits (> 0: past one) while the target slid
/// from the tool's pose by (-0.35, 0, -0.25) m at 0.15 m/s, toward the base and past where the elbow
/// (iiwa_joint_4, -2.09 rad) can follow, and then held there 1.5 s: per joint, the largest.
template<typename Controller>
std::vector<double> past_limits_under_a_sliding_target(const std::string & extra)
{
  Loop<Controller> loop(extra);
  std::vector<double> T0, T, past(7, -std::numeric_limits<double>::infinity());
  loop.tool(T0);
  const double duration = std::hypot(0.35, 0.25) / 0.15;
  const auto & c = loop.controller.controller->core();
  for (int i = 0; i < static_cast<int>((duration + 1.5) / kDt); ++i) {
    const double s = std::min(kDt * i / duration, 1.0);
    T = T0;
    T[3] -= 0.35 * s, T[11] -= 0.25 * s;
    EXPECT_EQ(loop.controller.controller->set_target(pose_of(T)), "");
    loop.cycle();
    if (::testing::Test::HasFatalFailure()) {
      return past;
    }
    for (size_t j = 0; j < 7; ++j) {
      const double q = loop.hw->positions()[j];
      past[j] = std::max({past[j], q - c.upper[j], c.lower[j] - q});
    }
  }
  EXPECT_EQ(c.status() & robot_dynamics_control::TICK_FAULT, 0);
  return past;
}

TEST_F(TaskSpace, ATargetPastAJointLimitLeavesTheJointsInsideTheirLimits)
{
  // the joint-limit barrier (joint_limit_margin 0.1 rad, 20 rad/s by default) holds the elbow at the
  // band's edge, 0.1 rad inside its limit; without it the same target takes the elbow 0.36 rad past it
  const auto impedance = past_limits_under_a_sliding_target<CartesianImpedanceController>("");
  const auto osc = past_limits_under_a_sliding_target<OperationalSpaceController>(
    "    omega: [20.0, 20.0, 20.0, 20.0, 20.0, 20.0]\n");
  for (const auto * past : {&impedance, &osc}) {
    EXPECT_LT(*std::max_element(past->begin(), past->end()), -0.05);
    EXPECT_NEAR((*past)[3], -0.1, 0.02) << "the elbow at the band's edge";
  }
  const auto unbounded = past_limits_under_a_sliding_target<CartesianImpedanceController>("    joint_limit_margin: 0.0\n");
  EXPECT_GT(unbounded[3], 0.2) << "without the barrier the elbow passes its limit";
}

/// The largest joint speed over the joint's velocity limit while the target jumps from the tool's pose
/// by (-0.35, 0, -0.25) m at once and stays there 1 s.
template<typename Controller>
double speed_under_a_jumping_target(const std::string & extra)
{
  Loop<Controller> loop(extra);
  std::vector<double> T;
  loop.tool(T);
  T[3] -= 0.35, T[11] -= 0.25;
  const auto & c = loop.controller.controller->core();
  double most = 0.0;
  for (int i = 0; i < static_cast<int>(1.0 / kDt); ++i) {
    EXPECT_EQ(loop.controller.controller->set_target(pose_of(T)), "");
    loop.cycle();
    if (::testing::Test::HasFatalFailure()) {
      return most;
    }
    for (size_t j = 0; j < 7; ++j) {
      most = std::max(most, std::abs(loop.hw->velocities()[j]) / c.velocity_limit[j]);
    }
  }
  EXPECT_EQ(c.status() & robot_dynamics_control::TICK_FAULT, 0);
  return most;
}

TEST_F(TaskSpace, ATargetThatJumpsLeavesTheJointsInsideTheirVelocityLimits)
{
  // the velocity barrier on the URDF's limits (omega: joint_limit_frequency, 20 rad/s; and no tick past a
  // limit): the joints reach their limits and stay within them (the library's test shows them at 7-8
  // times theirs without it)
  for (double speed : {speed_under_a_jumping_target<CartesianImpedanceController>(""),
                       speed_under_a_jumping_target<OperationalSpaceController>(
                         "    omega: [20.0, 20.0, 20.0, 20.0, 20.0, 20.0]\n")}) {
    EXPECT_LE(speed, 1.0 + 1e-3);  // within a tick the torque is held while A(q) changes: 1e-4 past
    EXPECT_GT(speed, 0.9) << "the target is fast enough to reach the limits";
  }
}

/// After 0.1 s of holding the tool, deactivation commands the gravity torque of the pose it leaves.
template<typename Controller>
void deactivation_holds_the_gravity_torque_of_the_pose()
{
  Loop<Controller> loop("");
  loop.run(0.1);
  loop.controller.deactivate();
  std::vector<double> g(7), zero(7, 0.0);
  rd_gravity_compensation(&loop.model->model(), loop.hw->positions().data(), zero.data(), 0, g.data(),
                          &loop.model->work());
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_NEAR(loop.controller.command_values[i], g[i], 1e-9);
  }
}

TEST_F(TaskSpace, DeactivationHoldsTheGravityTorqueOfThePose)
{
  deactivation_holds_the_gravity_torque_of_the_pose<CartesianImpedanceController>();
  deactivation_holds_the_gravity_torque_of_the_pose<OperationalSpaceController>();
}

}  // namespace
