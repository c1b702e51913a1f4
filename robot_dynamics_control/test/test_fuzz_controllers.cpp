// The controllers under hostile input: random configurations, measured states, references and
// parameter changes at run time, through each controller on plain doubles (controller_harness.hpp),
// on the PUMA 560 and the 3-dof geared robot (the task-space controllers: their last frame's pose,
// targets from ~/target_pose or the reference interfaces). After every update(): it returns OK, it allocates
// nothing (allocation_counter.hpp; a parameter change or a reference is made outside the counted
// part), and every effort is finite (NaN only under stop_behaviour "brake") and within its joint's
// effort limit (the effort_limits parameter, else the URDF's); so are the efforts written at
// activation and deactivation. Back on a sane state with its configured parameters, a controller
// leaves its fault without being activated again. The parameters are listed from the controller's
// node (list_parameters, describe_parameters): a parameter added to a controller is fuzzed here
// without a change to this file.
//
// Seeded and reproducible; each case draws from its own stream of the seed:
//   RD_FUZZ_SEED    the seed (default 42)
//   RD_FUZZ_BUDGET  steps per case, an action and an update each (default 3000: about 15 s for
//                   the nine cases on 2 cores)
// A longer run, from another seed, of one controller:
//   RD_FUZZ_SEED=7 RD_FUZZ_BUDGET=200000 build/robot_dynamics_control/test_fuzz_controllers
//     --gtest_filter='*ComputedTorque*'
// A failure names the case, seed and step and lists the actions before it; a crash lists them too
// (from a signal handler) before the process dies.
//
// This file: the nine cases. The fuzzer: fuzzer.hpp; what it shares with the Reproduce tests (the
// defects the fuzz found, each in its fewest steps, the executable test_fuzz_findings):
// fuzz_support.hpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz_support.hpp"
#include "fuzzer.hpp"

namespace rd_fuzz
{
namespace
{

/// One case: controller C (its plugin name ``controller``) on ``robot``, ``other`` the robot whose
/// files a configuration may name instead; the findings reported as failures of the test.
template<typename C>
void fuzz(const std::string & controller, const Robot & robot, const Robot & other)
{
  ASSERT_FALSE(robot.joints.empty());
  const Settings s = settings();
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const uint64_t seed = case_seed(s.seed, name);
  const std::string reproduce = "RD_FUZZ_SEED=" + std::to_string(s.seed) + " RD_FUZZ_BUDGET=" +
                                std::to_string(s.budget) + " test_fuzz_controllers --gtest_filter='*." + name + "'";
  std::printf("[ fuzz     ] %s: seed %llu (case stream %llu), %ld steps\n", name.c_str(),
              static_cast<unsigned long long>(s.seed), static_cast<unsigned long long>(seed), s.budget);
  std::fflush(stdout);
  journal.start(name + "; reproduce: " + reproduce);
  Fuzzer<C> fuzzer(controller, robot, other, seed, s.budget);
  fuzzer.run();
  std::printf("[ fuzz     ] %s: %s\n", name.c_str(), fuzzer.summary().c_str());
  fuzzer.findings().report();
}

}  // namespace

TEST_F(FuzzControllers, GravityCompensationPuma560)
{
  fuzz<GravityCompensationController>("gravity_compensation", puma560(), three_dof_geared());
}

TEST_F(FuzzControllers, GravityCompensationThreeDofGeared)
{
  fuzz<GravityCompensationController>("gravity_compensation", three_dof_geared(), puma560());
}

TEST_F(FuzzControllers, PdGravityPuma560)
{
  fuzz<PdGravityController>("pd_gravity", puma560(), three_dof_geared());
}

TEST_F(FuzzControllers, PdGravityThreeDofGeared)
{
  fuzz<PdGravityController>("pd_gravity", three_dof_geared(), puma560());
}

TEST_F(FuzzControllers, ComputedTorquePuma560)
{
  fuzz<ComputedTorqueController>("computed_torque", puma560(), three_dof_geared());
}

TEST_F(FuzzControllers, ComputedTorqueThreeDofGeared)
{
  fuzz<ComputedTorqueController>("computed_torque", three_dof_geared(), puma560());
}

TEST_F(FuzzControllers, CartesianImpedancePuma560)
{
  fuzz<CartesianImpedanceController>("cartesian_impedance", puma560(), three_dof_geared());
}

TEST_F(FuzzControllers, OperationalSpacePuma560)
{
  fuzz<OperationalSpaceController>("operational_space", puma560(), three_dof_geared());
}

TEST_F(FuzzControllers, CartesianImpedanceThreeDofGeared)
{
  fuzz<CartesianImpedanceController>("cartesian_impedance", three_dof_geared(), puma560());
}

}  // namespace rd_fuzz
