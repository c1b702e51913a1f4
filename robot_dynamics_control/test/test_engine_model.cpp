// EngineModel: the model of a URDF through robot_dynamics' converter, its names and limits, and
// the one-line errors of bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "robot_dynamics_control/engine_model.hpp"
#include "test_files.hpp"

using robot_dynamics_control::EngineModel;
using robot_dynamics_control::test::read_text;
using robot_dynamics_control::test::robot_file;

namespace
{

std::string error_of(const std::function<void()> & f)
{
  try {
    f();
  } catch (const std::runtime_error & e) {
    return e.what();
  }
  return "";
}

TEST(EngineModel, Puma560FromDescription)
{
  const auto m = EngineModel::from_description(
    read_text(robot_file("urdf/puma560.urdf")), robot_file("config/puma560_drivetrain.yaml"));
  ASSERT_EQ(m->nq(), 6);
  EXPECT_EQ(m->model().nb, 6);
  EXPECT_EQ(m->joint_names().front(), "joint1");
  EXPECT_EQ(m->joint_names().back(), "joint6");
  EXPECT_EQ(m->robot_name(), "puma560");
  EXPECT_EQ(m->indices_of({"joint3", "joint1"}), (std::vector<int>{2, 0}));
  ASSERT_EQ(m->effort_limits().size(), 6u);
  for (double l : m->effort_limits()) {
    EXPECT_GT(l, 0.0);
  }
  // the workspace is usable: gravity torques at q = 0 are finite, and the model's rotor inertia is in
  std::vector<double> q(6, 0.0), tau(6, 0.0);
  ASSERT_EQ(rd_gravity_compensation(&m->model(), q.data(), q.data(), 0, tau.data(), &m->work()), RD_OK);
  for (double t : tau) {
    EXPECT_TRUE(std::isfinite(t));
  }
  EXPECT_GT(m->model().joint[0].Ia, 0.0);
}

TEST(EngineModel, UnknownJointNamesTheValidOnes)
{
  const auto m = EngineModel::from_description(read_text(robot_file("urdf/puma560.urdf")), "");
  const std::string e = error_of([&] { m->indices_of({"joint1", "elbow"}); });
  EXPECT_NE(e.find("'elbow'"), std::string::npos) << e;
  EXPECT_NE(e.find("['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6']"), std::string::npos) << e;
}

TEST(EngineModel, BadDescriptionGivesTheConvertersReason)
{
  const std::string e = error_of([] { EngineModel::from_description("<robot name='x'><link", ""); });
  EXPECT_EQ(e.rfind("robot-dynamics engine-model failed: ", 0), 0u) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  EXPECT_NE(error_of([] { EngineModel::from_description("  \n", ""); }).find("empty"), std::string::npos);
  const std::string d = error_of([] {
    EngineModel::from_description(read_text(robot_file("urdf/puma560.urdf")), "/nonexistent/drive.yaml");
  });
  EXPECT_NE(d.find("drive.yaml"), std::string::npos) << d;
}

TEST(EngineModel, BadTextGivesTheParsersReason)
{
  const std::string e = error_of([] { EngineModel::from_text("not a model\n"); });
  EXPECT_EQ(e.rfind("engine model text: ", 0), 0u) << e;
  EXPECT_GT(e.size(), std::string("engine model text: ").size()) << e;
}

TEST(EngineModel, MissingConverterIsNamed)
{
  ::setenv("ROBOT_DYNAMICS_CLI", "/nonexistent/robot-dynamics", 1);
  const std::string e = error_of([] { EngineModel::from_description("<robot name='x'/>", ""); });
  ::unsetenv("ROBOT_DYNAMICS_CLI");
  EXPECT_NE(e.find("/nonexistent/robot-dynamics"), std::string::npos) << e;
}

}  // namespace
