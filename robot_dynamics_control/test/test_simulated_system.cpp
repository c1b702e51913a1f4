// SimulatedSystem, the in-process plant: its interfaces, its physics (an RK4 written here over the
// engine's direct dynamics, a static equilibrium under gravity torques, energy conserved without
// friction), the brakes and saturation of the command, bad configurations, the simulated external
// torque and wrench (set directly and by their topics), and read()/write() without allocation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hardware_interface/component_parser.hpp"
#include "hardware_interface/types/hardware_interface_return_values.hpp"
#include "rclcpp/rclcpp.hpp"
#include "rclcpp_lifecycle/state.hpp"
#include "robot_dynamics_control/engine_model.hpp"
#include "robot_dynamics_control/simulated_system.hpp"
#include "simulated_system_harness.hpp"
#include "test_files.hpp"

namespace
{
using robot_dynamics_control::EngineModel;
using robot_dynamics_control::SimulatedSystem;
// the harness (Sim, puma_with_block, param, info_of, allocations_in_cycles, ...) and the test files
using namespace robot_dynamics_control::test;  // NOLINT(build/namespaces)

// x <- x + RK4 over h of (qd, aba(q, qd, u)) with the model's gravity and friction: the reference
// integrator, written here
void rk4_reference(EngineModel & m, std::vector<double> & x, const std::vector<double> & u, double h, int friction)
{
  const int n = m.nq();
  auto f = [&](const std::vector<double> & s, std::vector<double> & d) {
    d.assign(2 * n, 0.0);
    for (int i = 0; i < n; ++i) {
      d[i] = s[n + i];
    }
    const rd_input in{s.data(), s.data() + n, nullptr, u.data(), nullptr, 0};
    const rd_options options{nullptr, friction, 0.0};
    ASSERT_EQ(rd_aba(&m.model(), &in, &options, d.data() + n, &m.work()), RD_OK);
  };
  std::vector<double> k1, k2, k3, k4, s(2 * n);
  f(x, k1);
  for (int i = 0; i < 2 * n; ++i) s[i] = x[i] + 0.5 * h * k1[i];
  f(s, k2);
  for (int i = 0; i < 2 * n; ++i) s[i] = x[i] + 0.5 * h * k2[i];
  f(s, k3);
  for (int i = 0; i < 2 * n; ++i) s[i] = x[i] + h * k3[i];
  f(s, k4);
  for (int i = 0; i < 2 * n; ++i) x[i] += h / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
}

const std::vector<double> kQ0 = {0.1, -0.4, 0.3, 0.2, -0.5, 0.6};

std::string drive() { return robot_file("config/puma560_drivetrain.yaml"); }

TEST(SimulatedSystem, ExportsThreeStatesAndOneEffortCommandPerJointStartingAtTheInitialValues)
{
  Sim sim(puma_with_block(param("drivetrain", drive()), kQ0));
  ASSERT_EQ(sim.states.size(), 18u);
  ASSERT_EQ(sim.commands.size(), 6u);
  EXPECT_EQ(sim.states[0].get_name(), "joint1/position");
  EXPECT_EQ(sim.states[1].get_name(), "joint1/velocity");
  EXPECT_EQ(sim.states[2].get_name(), "joint1/effort");
  EXPECT_EQ(sim.commands[5].get_name(), "joint6/effort");
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(sim.states[3 * i].get_value(), kQ0[i]);
    EXPECT_EQ(sim.states[3 * i + 1].get_value(), 0.0);
  }
  // the hardware parameter initial_positions wins over the interfaces' initial values
  Sim listed(puma_with_block(param("initial_positions", "0.5, 0, 0, 0, 0, -1"), kQ0));
  EXPECT_EQ(listed.hw->positions()[0], 0.5);
  EXPECT_EQ(listed.hw->positions()[5], -1.0);
}

TEST(SimulatedSystem, NoCommandHoldsTheArmThenItFallsUnderZeroEffort)
{
  Sim sim(puma_with_block(param("drivetrain", drive()), kQ0));
  for (int k = 0; k < 100; ++k) {
    ASSERT_EQ(sim.cycle(), return_type::OK);  // NaN commands: ros2_control's "no command"
  }
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(sim.hw->positions()[i], kQ0[i]);
    EXPECT_EQ(sim.hw->velocities()[i], 0.0);
    EXPECT_EQ(sim.hw->efforts()[i], 0.0);
  }
  // a command on joint 2 only: the others get zero effort (NaN), the brakes are released
  sim.command = {kNaN, 0.0, kNaN, kNaN, kNaN, kNaN};
  for (int k = 0; k < 50; ++k) {
    ASSERT_EQ(sim.cycle(), return_type::OK);
  }
  EXPECT_GT(std::abs(sim.hw->positions()[1] - kQ0[1]), 1e-3);  // joint 2 falls under gravity
  // the same motion as an explicit zero effort on every joint
  Sim zero(puma_with_block(param("drivetrain", drive()), kQ0));
  zero.cycle();
  zero.command = std::vector<double>(6, 0.0);
  for (int k = 0; k < 50; ++k) {
    zero.cycle();
  }
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(sim.hw->positions()[i], zero.hw->positions()[i]);
  }
}

TEST(SimulatedSystem, EachPeriodIsRk4OfTheDirectDynamicsUnderTheHeldEffort)
{
  for (int substeps : {1, 3}) {
    Sim sim(puma_with_block(param("drivetrain", drive()) + param("substeps", std::to_string(substeps)), kQ0));
    auto model = EngineModel::from_text(engine_model_text(read_text(robot_file("urdf/puma560.urdf")), drive(), "--strict"));
    std::vector<double> x(kQ0);
    x.resize(12, 0.0);
    sim.cycle();  // braked: nothing moves
    sim.command = {10.0, -40.0, 5.0, 0.3, -0.2, 0.1};
    sim.cycle();  // the command is taken here and held over the next period
    const std::vector<double> u = sim.command;
    for (int k = 0; k < 20; ++k) {
      const double dt = 0.002 + 1e-4 * (k % 3);  // the measured period varies
      sim.cycle(dt);
      for (int s = 0; s < substeps; ++s) {
        rk4_reference(*model, x, u, dt / substeps, 1);
      }
      for (std::size_t i = 0; i < 6; ++i) {
        ASSERT_NEAR(sim.hw->positions()[i], x[i], 1e-12) << "substeps " << substeps << " cycle " << k;
        ASSERT_NEAR(sim.hw->velocities()[i], x[6 + i], 1e-10);
        ASSERT_EQ(sim.hw->efforts()[i], u[i]);  // the effort applied over the period
      }
    }
  }
}

TEST(SimulatedSystem, GravityTorquesHoldTheArmAndEnergyIsConservedWithoutFriction)
{
  Sim sim(puma_with_block(param("drivetrain", drive()) + param("friction", "false") + param("substeps", "2"), kQ0));
  auto model = EngineModel::from_text(engine_model_text(read_text(robot_file("urdf/puma560.urdf")), drive(), "--strict"));
  std::vector<double> tau(6), zero(6, 0.0);
  const rd_input at_rest{kQ0.data(), zero.data(), zero.data(), nullptr, nullptr, 0};
  ASSERT_EQ(rd_rnea(&model->model(), &at_rest, nullptr, tau.data(), &model->work()), RD_OK);
  EXPECT_GT(std::abs(tau[1]), 10.0);  // the shoulder carries the arm
  sim.command = tau;
  for (int k = 0; k < 500; ++k) {  // one second
    ASSERT_EQ(sim.cycle(), return_type::OK);
  }
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(sim.hw->positions()[i], kQ0[i], 1e-9);
    EXPECT_NEAR(sim.hw->velocities()[i], 0.0, 1e-9);
  }
  // zero effort: the arm swings, kinetic + potential energy stays (RK4's error only)
  auto energy = [&](const SimulatedSystem & hw) {
    double e[2];
    EXPECT_EQ(rd_energy(&model->model(), hw.positions().data(), hw.velocities().data(), model->model().gravity, e,
                        &model->work()), RD_OK);
    return e[0] + e[1];
  };
  const double e0 = energy(*sim.hw);
  sim.command = zero;
  double swing = 0.0;
  for (int k = 0; k < 500; ++k) {
    ASSERT_EQ(sim.cycle(), return_type::OK);
    swing = std::max(swing, std::abs(sim.hw->velocities()[1]));
  }
  EXPECT_GT(swing, 1.0);
  EXPECT_NEAR(energy(*sim.hw), e0, 1e-6 * std::max(1.0, std::abs(e0)));
}

TEST(SimulatedSystem, EffortsAreClippedToTheLimitsAndALatePeriodIsCutIntoShortSteps)
{
  Sim sim(puma_with_block(param("drivetrain", drive()), kQ0));
  auto model = EngineModel::from_text(engine_model_text(read_text(robot_file("urdf/puma560.urdf")), drive(), "--strict"));
  sim.command = {1e6, -1e6, 0.0, 0.0, 0.0, std::numeric_limits<double>::infinity()};
  sim.cycle();
  sim.cycle();
  EXPECT_EQ(sim.hw->efforts()[0], model->effort_limits()[0]);
  EXPECT_EQ(sim.hw->efforts()[1], -model->effort_limits()[1]);
  EXPECT_EQ(sim.hw->efforts()[5], model->effort_limits()[5]);
  // a stalled cycle of 0.2 s: 40 steps of 5 ms, the same as 40 short cycles
  Sim a(puma_with_block(param("drivetrain", drive()), kQ0)), b(puma_with_block(param("drivetrain", drive()), kQ0));
  a.command = b.command = std::vector<double>(6, 0.0);
  a.cycle();
  b.cycle();
  ASSERT_EQ(a.cycle(0.2), return_type::OK);
  std::vector<double> x(kQ0);
  x.resize(12, 0.0);
  for (int k = 0; k < 40; ++k) {
    rk4_reference(*model, x, std::vector<double>(6, 0.0), 0.005, 1);
  }
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(a.hw->positions()[i], x[i], 1e-12);
    EXPECT_TRUE(std::isfinite(a.hw->velocities()[i]));
  }
}

TEST(SimulatedSystem, ReadAndWriteAllocateNothing)
{
  Sim sim(puma_with_block(param("drivetrain", drive()), kQ0));
  sim.command = {1.0, 2.0, 3.0, 0.1, 0.2, 0.3};
  sim.cycle();
  EXPECT_EQ(allocations_in_cycles(sim, 200), 0);
}

TEST(SimulatedSystem, BadConfigurationsFailAtInitNamingTheChoices)
{
  const std::vector<std::string> bad = {
    param("substeps", "0"), param("substeps", "1.5"), param("friction", "maybe"), param("max_step", "-1"),
    param("nonsense", "1"), param("drivetrain", "/nonexistent/drive.yaml"),
    param("initial_positions", "1, 2")};
  for (const auto & p : bad) {
    SimulatedSystem hw;
    EXPECT_EQ(hw.on_init(info_of(puma_with_block(p, kQ0))), CallbackReturn::ERROR) << p;
  }
  // a joint the model does not have, a model joint left out (the parsed block edited: Jazzy's
  // parser itself refuses joints that are not movable joints of the URDF)
  auto info = info_of(puma_with_block("", kQ0));
  info.joints[0].name = "gripper";
  SimulatedSystem hw;
  EXPECT_EQ(hw.on_init(info), CallbackReturn::ERROR);
  info = info_of(puma_with_block("", kQ0));
  info.joints.pop_back();
  SimulatedSystem hw1;
  EXPECT_EQ(hw1.on_init(info), CallbackReturn::ERROR);
  // a joint without its effort command interface
  std::string no_effort = puma_with_block("", kQ0);
  const std::string effort = "<command_interface name=\"effort\"/>";
  no_effort.replace(no_effort.find(effort), effort.size(), "<command_interface name=\"position\"/>");
  SimulatedSystem hw2;
  EXPECT_EQ(hw2.on_init(info_of(no_effort)), CallbackReturn::ERROR);
}

TEST(SimulatedSystem, AFailingStepIsAnErrorAndKeepsTheState)
{
  // a pendulum on a continuous joint: no effort limit, so an infinite command reaches the engine
  const std::string robot =
    "<robot name='pendulum'><link name='base'/><link name='bob'><inertial><origin xyz='0 0 -0.5'/>"
    "<mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "<joint name='swing' type='continuous'><parent link='base'/><child link='bob'/><axis xyz='0 1 0'/></joint>";
  const std::string urdf =
    robot + "<ros2_control name='pendulum' type='system'><hardware><plugin>robot_dynamics_control/SimulatedSystem</plugin>" +
    param("robot_model", engine_model_text(robot + "</robot>", "", "--strict --allow-no-effort-limit")) +
    "</hardware><joint name='swing'><command_interface name='effort'/><state_interface name='position'>"
    "<param name='initial_value'>0.3</param></state_interface></joint></ros2_control></robot>";
  SimulatedSystem hw;
  ASSERT_EQ(hw.on_init(info_of(urdf)), CallbackReturn::SUCCESS);
  auto states = hw.export_state_interfaces();
  auto commands = hw.export_command_interfaces();
  ASSERT_EQ(states.size(), 1u);
  hw.on_activate(rclcpp_lifecycle::State());
  const rclcpp::Time t(0);
  const rclcpp::Duration dt(std::chrono::nanoseconds(2000000));
  commands[0].set_value(std::numeric_limits<double>::infinity());
  ASSERT_EQ(hw.write(t, dt), return_type::OK);
  EXPECT_EQ(hw.read(t, dt), return_type::ERROR);
  EXPECT_EQ(hw.positions()[0], 0.3);
  commands[0].set_value(0.0);
  hw.write(t, dt);
  EXPECT_EQ(hw.read(t, dt), return_type::OK);  // a good command runs again
  EXPECT_LT(std::abs(hw.positions()[0]), 0.3);  // the pendulum swings back under gravity
}

TEST(SimulatedSystem, RefusesAPhysicallyImpossiblePlantUnlessAllowed)
{
  // the bare URDF's link 3 breaks the triangle inequality; its drive-train YAML accepts that issue
  const std::vector<double> q0(kJoints.size(), 0.0);
  std::string bare = puma_with_block("", q0);
  const std::string allow = param("allow_nonphysical_model", "true");
  bare.erase(bare.find(allow), allow.size());
  SimulatedSystem refused;
  EXPECT_EQ(refused.on_init(info_of(bare)), CallbackReturn::ERROR);
  SimulatedSystem allowed;
  EXPECT_EQ(allowed.on_init(info_of(puma_with_block("", q0))), CallbackReturn::SUCCESS);
  SimulatedSystem declared;
  EXPECT_EQ(
    declared.on_init(info_of(puma_with_block(param("drivetrain", robot_file("config/puma560_drivetrain.yaml")), q0))),
    CallbackReturn::SUCCESS);
}

// The engine's period of a simulated arm (rd_plant_advance) is the step of the simulation, the
// simulator node and SimulatedSystem: one command sequence gives, bit for bit, the states that
// robot_dynamics/test/simulation/test_plant_period_same_in_every_driver.py stores (GOLDEN) and checks for the
// simulation and the node. The brakes without a command (NaN on every joint) at the start and
// after a release, a NaN joint at zero effort, a late period of 0.023 s cut into 5 steps of 0.0046 s.
TEST(SimulatedSystem, GivesTheStatesOfTheEnginePeriodThatTheSimulationAndTheNodeGive)
{
  const std::vector<double> c1 = {10.0, -40.0, 5.0, 0.3, -0.2, 0.1}, c2 = {-6.0, 30.0, -8.0, 0.2, 0.1, -0.3};
  const std::vector<double> none(6, kNaN), part = {kNaN, 5.0, kNaN, kNaN, kNaN, kNaN};
  std::vector<std::pair<double, std::vector<double>>> cycles = {{0.002, none}, {0.002, c1}};
  for (int k = 0; k < 5; ++k) {
    cycles.emplace_back(0.002, c1);
  }
  cycles.emplace_back(0.002, none);
  for (int k = 0; k < 3; ++k) {
    cycles.emplace_back(0.002, c2);
  }
  for (const auto & c : {std::make_pair(0.002, part), std::make_pair(0.023, part), std::make_pair(0.002, c1),
                         std::make_pair(0.002, c1)}) {
    cycles.push_back(c);
  }
  const std::vector<std::pair<std::size_t, std::vector<double>>> golden = {
    {6, {0x1.9b0a17596c948p-4, -0x1.9bfa4489dc4cdp-2, 0x1.35a83dc73e10fp-2, 0x1.a5a19710e28dfp-3,
         -0x1.08130e879fbfbp-1, 0x1.706d8bcb8199dp-1, 0x1.205f521846647p-4, -0x1.db885d4c186a9p-2,
         0x1.ead83a33cd1d0p-2, 0x1.2cf8ef4572243p+0, -0x1.934bcfd9cc6d1p+1, 0x1.7ebd56ca97c9cp+4}},
    {10, {0x1.9b9012a157bd3p-4, -0x1.9d048befd864dp-2, 0x1.36814ebc4395ep-2, 0x1.af95956c343f2p-3,
          -0x1.0acdaab846b04p-1, 0x1.6ba55187a1248p-1, -0x1.be155eb22ea25p-7, 0x1.8259db3916021p-9,
          -0x1.cec1982a34a16p-4, 0x1.2300d732461a8p+0, 0x1.98cc8be0e1a5fp-1, -0x1.efc7977308d08p+4}},
    {14, {0x1.9ade91799bf26p-4, -0x1.a380c1e672eb8p-2, 0x1.353a0ef560b9cp-2, 0x1.09e9ff7a8c6d4p-2,
          -0x1.f2a9e50d53299p-2, -0x1.3c971aa427132p-1, 0x1.641c57726bb64p-6, -0x1.0e0425e897cc8p-1,
          0x1.559d63d1336a6p-3, 0x1.ed3a7b89239d6p+0, 0x1.325c163507e7ep-1, -0x1.4e1ccf9ae9e99p+5}},
  };
  Sim sim(puma_with_block(param("substeps", "2"), kQ0));  // the bare URDF, max_step 0.005 s
  std::size_t g = 0;
  for (std::size_t k = 0; k < cycles.size(); ++k) {
    sim.command = cycles[k].second;
    ASSERT_EQ(sim.cycle(cycles[k].first), return_type::OK) << "cycle " << k;
    if (k == 0 || k == 1 || k == 8) {  // braked: at rest, no effort
      for (std::size_t i = 0; i < 6; ++i) {
        EXPECT_EQ(sim.hw->velocities()[i], 0.0) << "cycle " << k;
        EXPECT_EQ(sim.hw->efforts()[i], 0.0) << "cycle " << k;
      }
    }
    if (k == 12) {  // the command on joint 2 only: the others at zero effort
      EXPECT_EQ(sim.hw->efforts()[1], 5.0);
      EXPECT_EQ(sim.hw->efforts()[0], 0.0);
    }
    if (g < golden.size() && golden[g].first == k) {
      for (std::size_t i = 0; i < 6; ++i) {
        EXPECT_EQ(sim.hw->positions()[i], golden[g].second[i]) << "cycle " << k << " joint " << i;
        EXPECT_EQ(sim.hw->velocities()[i], golden[g].second[6 + i]) << "cycle " << k << " joint " << i;
      }
      ++g;
    }
  }
  EXPECT_EQ(g, golden.size());
}

sensor_msgs::msg::JointState torque_message(const std::vector<std::string> & names, const std::vector<double> & torque)
{
  sensor_msgs::msg::JointState msg;
  msg.name = names;
  msg.effort = torque;
  return msg;
}

TEST(SimulatedSystem, ASimulatedExternalTorqueActsBesideTheCommandAndIsNoMotorsEffort)
{
  const std::string block = puma_with_block(param("drivetrain", drive()), kQ0);
  Sim pushed(block), commanded(block);
  const std::vector<double> command = {5.0, 40.0, 10.0, 0.5, 0.2, 0.1};
  const std::vector<double> torque = {2.0, -30.0, 7.0, 0.0, 0.3, -0.2};  // [N m]
  // joints named in any order, the others zero
  ASSERT_EQ(pushed.hw->set_external_torque(torque_message(
              {"joint6", "joint5", "joint3", "joint2", "joint1"}, {-0.2, 0.3, 7.0, -30.0, 2.0})), "");
  pushed.command = command;
  for (std::size_t i = 0; i < 6; ++i) {
    commanded.command[i] = command[i] + torque[i];
  }
  for (int k = 0; k < 200; ++k) {
    ASSERT_EQ(pushed.cycle(0.001), return_type::OK);
    ASSERT_EQ(commanded.cycle(0.001), return_type::OK);
  }
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(pushed.hw->positions()[i], commanded.hw->positions()[i]) << "the same motion, joint " << i + 1;
    EXPECT_EQ(pushed.hw->velocities()[i], commanded.hw->velocities()[i]);
    EXPECT_NEAR(pushed.hw->efforts()[i], command[i], 1e-12) << "the effort state: the motor's";
    EXPECT_EQ(commanded.hw->efforts()[i], command[i] + torque[i]);
    EXPECT_EQ(pushed.hw->external_torques()[i], torque[i]);
  }
  EXPECT_GT(std::abs(pushed.hw->positions()[1] - kQ0[1]), 1e-3) << "it moved";
  EXPECT_EQ(allocations_in_cycles(pushed, 100), 0) << "read() and write() with the torque allocate nothing";
  // refused messages leave the torque as it was
  for (const auto & bad : {torque_message({"joint9"}, {1.0}), torque_message({"joint1", "joint2"}, {1.0}),
                           torque_message({"joint1"}, {kNaN})}) {
    EXPECT_NE(pushed.hw->set_external_torque(bad), "");
  }
  pushed.cycle(0.001);
  EXPECT_EQ(pushed.hw->external_torques()[1], torque[1]);
  // no command (the brakes): no push either
  Sim braked(block);
  ASSERT_EQ(braked.hw->set_external_torque(torque_message({"joint2"}, {-30.0})), "");
  for (int k = 0; k < 50; ++k) {
    braked.cycle(0.001);
  }
  EXPECT_EQ(braked.hw->positions()[1], kQ0[1]);
  EXPECT_EQ(braked.hw->external_torques()[1], 0.0);
}

TEST(SimulatedSystem, TheSimulatedExternalTorqueTopicSetsIt)
{
  const std::string block =
    puma_with_block(param("drivetrain", drive()) + param("simulated_external_torque_topic", "/test_simulated_push"), kQ0);
  EXPECT_ANY_THROW(Sim refused(block)) << "no ROS in the process: refused at init";
  rclcpp::init(0, nullptr);
  {
    Sim sim(block);
    sim.command = std::vector<double>(6, 0.0);
    auto node = std::make_shared<rclcpp::Node>("test_push_publisher");
    auto publisher = node->create_publisher<sensor_msgs::msg::JointState>("/test_simulated_push", rclcpp::QoS(10).reliable());
    const auto msg = torque_message({"joint3"}, {4.5});
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (sim.hw->external_torques()[2] != 4.5 && std::chrono::steady_clock::now() < end) {
      publisher->publish(msg);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      sim.cycle(0.001);
    }
    EXPECT_EQ(sim.hw->external_torques()[2], 4.5) << "the message reached the hardware";
    EXPECT_EQ(sim.hw->external_torques()[0], 0.0);
  }
  rclcpp::shutdown();
}

// -- the simulated external wrench, on the iiwa14's tool frame ----------------------------------------

const std::vector<std::string> kIiwaJoints = {
  "iiwa_joint_1", "iiwa_joint_2", "iiwa_joint_3", "iiwa_joint_4", "iiwa_joint_5", "iiwa_joint_6", "iiwa_joint_7"};
const std::vector<double> kIiwaQ0 = {0.3, 0.6, -0.4, -1.2, 0.5, 0.8, -0.2};  // away from singular poses

std::string iiwa_text() { return engine_model_text(read_text(robot_file("urdf/iiwa14.urdf")), "", "--strict"); }

// The iiwa14 with a <ros2_control> block for SimulatedSystem, `params` inside <hardware>.
std::string iiwa_with_block(const std::string & params)
{
  const std::string urdf = read_text(robot_file("urdf/iiwa14.urdf"));
  std::ostringstream b;
  b.precision(17);
  b << "<ros2_control name=\"iiwa14\" type=\"system\"><hardware><plugin>robot_dynamics_control/SimulatedSystem"
    << "</plugin>" << param("robot_model", iiwa_text()) << params << "</hardware>";
  for (std::size_t i = 0; i < kIiwaJoints.size(); ++i) {
    b << "<joint name=\"" << kIiwaJoints[i] << "\"><command_interface name=\"effort\"/>"
      << "<state_interface name=\"position\"><param name=\"initial_value\">" << kIiwaQ0[i] << "</param></state_interface>"
      << "<state_interface name=\"velocity\"/><state_interface name=\"effort\"/></joint>";
  }
  b << "</ros2_control>";
  return urdf.substr(0, urdf.rfind("</robot>")) + b.str() + "\n</robot>\n";
}

geometry_msgs::msg::WrenchStamped wrench_message(const std::string & frame_id, const std::vector<double> & w)
{
  geometry_msgs::msg::WrenchStamped msg;
  msg.header.frame_id = frame_id;
  msg.wrench.force.x = w[0], msg.wrench.force.y = w[1], msg.wrench.force.z = w[2];
  msg.wrench.torque.x = w[3], msg.wrench.torque.y = w[4], msg.wrench.torque.z = w[5];
  return msg;
}

// The joint torque J^T w of the wrench w = [f; m] (base axes) at the origin of frame k, at q: by the
// engine's inverse dynamics, whose term J^T f_en (Khalil 7.5, [7.30]) is tau(f_en = w) - tau(none),
// a derivation of its own (the recursion's force propagation, not the frame Jacobian).
std::vector<double> wrench_torque_by_rnea(EngineModel & m, const std::vector<double> & q, int k, const std::vector<double> & w)
{
  const auto n = static_cast<std::size_t>(m.nq());
  const rd_frame & frame = m.model().frame[k];
  const double row[RD_WRENCH] = {static_cast<double>(frame.body), frame.p[0], frame.p[1], frame.p[2],
                                 w[0], w[1], w[2], w[3], w[4], w[5]};
  std::vector<double> zero(n, 0.0), free(n), loaded(n), tau(n);
  const rd_input without{q.data(), zero.data(), zero.data(), nullptr, nullptr, 0};
  const rd_input with{q.data(), zero.data(), zero.data(), nullptr, row, 1};
  EXPECT_EQ(rd_rnea(&m.model(), &without, nullptr, free.data(), &m.work()), RD_OK);
  EXPECT_EQ(rd_rnea(&m.model(), &with, nullptr, loaded.data(), &m.work()), RD_OK);
  for (std::size_t j = 0; j < n; ++j) {
    tau[j] = loaded[j] - free[j];
  }
  return tau;
}

// base_R_frame of frame k at q (row-major 3 x 3).
std::vector<double> frame_rotation(EngineModel & m, const std::vector<double> & q, int k)
{
  double T[16];
  rd_body_poses(&m.model(), q.data(), &m.work());
  rd_frame_pose(&m.model(), &m.work(), k, T);
  return {T[0], T[1], T[2], T[4], T[5], T[6], T[8], T[9], T[10]};
}

TEST(SimulatedSystem, AWrenchAtTheToolGivesTheJointTorqueJTransposeFInBaseAndFrameAxes)
{
  auto model = EngineModel::from_text(iiwa_text());
  const int ee = model->frame_index("iiwa_link_ee");
  const std::vector<double> w = {10.0, -4.0, 6.0, 0.5, -1.5, 0.8};  // [N; N m], base axes
  const std::vector<double> expected = wrench_torque_by_rnea(*model, kIiwaQ0, ee, w);
  // the same wrench in the tool frame's axes: R^T f, R^T m
  const std::vector<double> R = frame_rotation(*model, kIiwaQ0, ee);
  std::vector<double> local(6, 0.0);
  for (int h = 0; h < 6; h += 3) {
    for (int a = 0; a < 3; ++a) {
      local[h + a] = R[a] * w[h] + R[3 + a] * w[h + 1] + R[6 + a] * w[h + 2];
    }
  }
  double largest = 0.0;
  for (double t : expected) {
    largest = std::max(largest, std::abs(t));
  }
  ASSERT_GT(largest, 3.0);  // a real push
  const std::string block = iiwa_with_block(param("simulated_external_wrench_frame", "iiwa_link_ee"));
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
    {"", w}, {"iiwa_link_0", w}, {"iiwa_link_ee", local}};
  for (const auto & c : cases) {
    Sim sim(block);
    sim.command = std::vector<double>(7, 0.0);
    ASSERT_EQ(sim.cycle(0.001), return_type::OK);  // braked, the command taken: the arm at q0, at rest
    ASSERT_EQ(sim.hw->set_external_wrench(wrench_message(c.first, c.second)), "") << c.first;
    ASSERT_EQ(sim.cycle(0.001), return_type::OK);
    for (std::size_t j = 0; j < 7; ++j) {
      EXPECT_NEAR(sim.hw->external_torques()[j], expected[j], 1e-9 * largest) << "frame_id '" << c.first << "' joint " << j + 1;
      EXPECT_EQ(sim.hw->efforts()[j], 0.0) << "the effort state: the motor's";
    }
  }
  // the simulated joint torque and the wrench add
  Sim both(block);
  both.command = std::vector<double>(7, 0.0);
  both.cycle(0.001);
  ASSERT_EQ(both.hw->set_external_wrench(wrench_message("", w)), "");
  ASSERT_EQ(both.hw->set_external_torque(torque_message({"iiwa_joint_2", "iiwa_joint_6"}, {3.0, -2.0})), "");
  both.cycle(0.001);
  for (std::size_t j = 0; j < 7; ++j) {
    const double joint = j == 1 ? 3.0 : j == 5 ? -2.0 : 0.0;
    EXPECT_NEAR(both.hw->external_torques()[j], expected[j] + joint, 1e-9 * largest) << "joint " << j + 1;
  }
  // a zero wrench: none
  ASSERT_EQ(both.hw->set_external_wrench(wrench_message("", std::vector<double>(6, 0.0))), "");
  both.cycle(0.001);
  EXPECT_EQ(both.hw->external_torques()[1], 3.0);
  EXPECT_EQ(both.hw->external_torques()[0], 0.0);
}

TEST(SimulatedSystem, TheArmMovesAsThePlantUnderTheWrenchsJointTorque)
{
  // the pushed arm against the same arm commanded, each period, the torque J^T F of its state at
  // the period's start (computed here by rnea between its read() and write()): the same motion, a
  // push of 20 N along the base's x
  auto model = EngineModel::from_text(iiwa_text());
  const int ee = model->frame_index("iiwa_link_ee");
  const std::vector<double> F = {20.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  std::vector<double> g(7), zero(7, 0.0);
  const rd_input at_rest{kIiwaQ0.data(), zero.data(), zero.data(), nullptr, nullptr, 0};
  ASSERT_EQ(rd_rnea(&model->model(), &at_rest, nullptr, g.data(), &model->work()), RD_OK);
  const std::string block = iiwa_with_block(param("simulated_external_wrench_frame", "iiwa_link_ee"));
  Sim pushed(block), commanded(block), held(block);
  pushed.command = held.command = g;  // gravity at q0: without the push the arm stays near q0
  ASSERT_EQ(pushed.hw->set_external_wrench(wrench_message("", F)), "");
  const rclcpp::Time time(0);
  const rclcpp::Duration period(std::chrono::nanoseconds(1000000));
  for (int k = 0; k < 300; ++k) {
    ASSERT_EQ(pushed.cycle(0.001), return_type::OK);
    ASSERT_EQ(held.cycle(0.001), return_type::OK);
    ASSERT_EQ(commanded.hw->read(time, period), return_type::OK);
    const std::vector<double> tau = wrench_torque_by_rnea(*model, commanded.hw->positions(), ee, F);
    for (std::size_t j = 0; j < 7; ++j) {
      commanded.commands[j].set_value(g[j] + tau[j]);
    }
    ASSERT_EQ(commanded.hw->write(time, period), return_type::OK);
  }
  double moved = 0.0;
  for (std::size_t j = 0; j < 7; ++j) {
    EXPECT_NEAR(pushed.hw->positions()[j], commanded.hw->positions()[j], 1e-9) << "joint " << j + 1;
    EXPECT_NEAR(pushed.hw->velocities()[j], commanded.hw->velocities()[j], 1e-8) << "joint " << j + 1;
    moved = std::max(moved, std::abs(pushed.hw->positions()[j] - held.hw->positions()[j]));
  }
  EXPECT_GT(moved, 1e-2) << "the push moved the arm";
  // the tool moved along the push: +x in the base
  double before[16], after[16];
  rd_body_poses(&model->model(), held.hw->positions().data(), &model->work());
  rd_frame_pose(&model->model(), &model->work(), ee, before);
  rd_body_poses(&model->model(), pushed.hw->positions().data(), &model->work());
  rd_frame_pose(&model->model(), &model->work(), ee, after);
  EXPECT_GT(after[3] - before[3], 1e-3);
  EXPECT_EQ(allocations_in_cycles(pushed, 100), 0) << "read() and write() with the wrench allocate nothing";
}

TEST(SimulatedSystem, ABadWrenchFrameOrFrameIdIsRefusedNamingTheValidOnes)
{
  // at on_init: an unknown frame, a topic without its frame
  for (const std::string & p : {param("simulated_external_wrench_frame", "tool0"),
                                param("simulated_external_wrench_topic", "/push"),
                                param("simulated_external_wrench_frame", "iiwa_joint_4")}) {
    SimulatedSystem hw;
    EXPECT_EQ(hw.on_init(info_of(iiwa_with_block(p))), CallbackReturn::ERROR) << p;
  }
  // a message: frame_id neither the base's nor the frame's, a non-finite value; nothing changes
  Sim sim(iiwa_with_block(param("simulated_external_wrench_frame", "iiwa_link_ee")));
  sim.command = std::vector<double>(7, 0.0);
  sim.cycle(0.001);
  const std::vector<double> w = {0.0, 0.0, -15.0, 0.0, 0.0, 0.0};
  ASSERT_EQ(sim.hw->set_external_wrench(wrench_message("iiwa_link_0", w)), "");
  sim.cycle(0.001);
  const std::vector<double> pushed = sim.hw->external_torques();
  const std::string id = sim.hw->set_external_wrench(wrench_message("world", {1.0, 0, 0, 0, 0, 0}));
  EXPECT_NE(id.find("'world'"), std::string::npos) << id;
  EXPECT_NE(id.find("'iiwa_link_0'"), std::string::npos) << id;
  EXPECT_NE(id.find("'iiwa_link_ee'"), std::string::npos) << id;
  for (double bad : {kNaN, std::numeric_limits<double>::infinity()}) {
    const std::string e = sim.hw->set_external_wrench(wrench_message("", {1.0, 0.0, 0.0, 0.0, bad, 0.0}));
    EXPECT_NE(e.find("torque.y is not finite"), std::string::npos) << e;
  }
  sim.cycle(0.001);
  double change = 0.0;
  for (std::size_t j = 0; j < 7; ++j) {
    change = std::max(change, std::abs(sim.hw->external_torques()[j] - pushed[j]));
  }
  EXPECT_LT(change, 1e-2) << "the wrench as it was (only the arm's small motion in one period changes J)";
  EXPECT_GT(std::abs(pushed[1]), 1.0);
  // no frame configured: a wrench has nowhere to act
  Sim none(iiwa_with_block(""));
  EXPECT_NE(none.hw->set_external_wrench(wrench_message("", w)).find("simulated_external_wrench_frame"), std::string::npos);
}

TEST(SimulatedSystem, TheSimulatedExternalWrenchTopicSetsIt)
{
  const std::string block = iiwa_with_block(param("simulated_external_wrench_topic", "/test_simulated_wrench") +
                                            param("simulated_external_wrench_frame", "iiwa_link_ee"));
  rclcpp::init(0, nullptr);
  {
    Sim sim(block);
    sim.command = std::vector<double>(7, 0.0);
    sim.cycle(0.001);
    auto node = std::make_shared<rclcpp::Node>("test_wrench_publisher");
    auto publisher =
      node->create_publisher<geometry_msgs::msg::WrenchStamped>("/test_simulated_wrench", rclcpp::QoS(10).reliable());
    const auto msg = wrench_message("iiwa_link_ee", {0.0, 0.0, 25.0, 0.0, 0.0, 0.0});
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::abs(sim.hw->external_torques()[1]) < 1e-6 && std::chrono::steady_clock::now() < end) {
      publisher->publish(msg);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      sim.cycle(0.001);
    }
    EXPECT_GT(std::abs(sim.hw->external_torques()[1]), 1.0) << "the message reached the hardware";
    EXPECT_NEAR(sim.hw->external_torques()[6], 0.0, 1e-9) << "a force along the tool's z axis, the last joint's axis";
  }
  rclcpp::shutdown();
}

}  // namespace
