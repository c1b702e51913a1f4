// EngineModel: the model of the text robot_dynamics' loader makes (`robot-dynamics engine-model`,
// run here as a launch runs it), its names, limits and recorded checks, and the one-line errors of
// a missing, bad or unchecked robot_model.
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
using robot_dynamics_control::test::engine_model_text;
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

std::string puma_text(const std::string & drivetrain, const std::string & options)
{
  return engine_model_text(read_text(robot_file("urdf/puma560.urdf")), drivetrain, options);
}

TEST(EngineModel, Puma560FromTheLoadersText)
{
  const auto m = EngineModel::from_text(puma_text(robot_file("config/puma560_drivetrain.yaml"), "--strict"));
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
  EXPECT_TRUE(m->checks().strict);
  EXPECT_FALSE(m->checks().effort_limits_given);
}

TEST(EngineModel, UnknownJointNamesTheValidOnes)
{
  const auto m = EngineModel::from_text(puma_text("", ""));
  const std::string e = error_of([&] { m->indices_of({"joint1", "elbow"}); });
  EXPECT_NE(e.find("'elbow'"), std::string::npos) << e;
  EXPECT_NE(e.find("['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6']"), std::string::npos) << e;
}

TEST(EngineModel, FramesByNameInTheModelsFrameOrder)
{
  // the iiwa14's links, base first, as `robot-dynamics engine-model` writes them (frame_names)
  const auto m = EngineModel::from_text(
    engine_model_text(read_text(robot_file("urdf/iiwa14.urdf")), "", "--strict"));
  const std::vector<std::string> links = {
    "iiwa_link_0", "iiwa_link_1", "iiwa_link_2", "iiwa_link_3", "iiwa_link_4",
    "iiwa_link_5", "iiwa_link_6", "iiwa_link_7", "iiwa_link_ee"};
  ASSERT_EQ(m->model().nf, 9);
  EXPECT_EQ(m->frame_names(), links);
  for (int k = 0; k < 9; ++k) {
    EXPECT_EQ(m->frame_index(links[static_cast<size_t>(k)]), k);
    EXPECT_EQ(rd_frame_index(&m->model(), links[static_cast<size_t>(k)].c_str()), k);
  }
  EXPECT_EQ(rd_frame_index(&m->model(), "tool0"), -1);
  EXPECT_EQ(rd_frame_index(&m->model(), nullptr), -1);
  // the index is the frame the engine places: the tool frame 1.306 m above the base at q = 0 (the
  // URDF's joint origins 0.1575 + 0.2025 + 0.2045 + 0.2155 + 0.1845 + 0.2155 + 0.081 + 0.045)
  std::vector<double> q(7, 0.0);
  double T[16];
  rd_body_poses(&m->model(), q.data(), &m->work());
  rd_frame_pose(&m->model(), &m->work(), m->frame_index("iiwa_link_ee"), T);
  EXPECT_NEAR(T[3], 0.0, 1e-9);
  EXPECT_NEAR(T[7], 0.0, 1e-9);
  EXPECT_NEAR(T[11], 1.306, 1e-9);
  const std::string e = error_of([&] { m->frame_index("tool0"); });
  EXPECT_NE(e.find("'tool0'"), std::string::npos) << e;
  EXPECT_NE(e.find("['iiwa_link_0', 'iiwa_link_1', "), std::string::npos) << e;
  EXPECT_NE(e.find("'iiwa_link_ee']"), std::string::npos) << e;
}

TEST(EngineModel, ATextWithoutFrameNamesLoadsWithNone)
{
  std::string text = puma_text("", "");
  const auto at = text.find("\nframe_names ");
  ASSERT_NE(at, std::string::npos);
  text.erase(at + 1, text.find('\n', at + 1) - at);
  ASSERT_EQ(text.find("frame_names"), std::string::npos);
  const auto m = EngineModel::from_text(text);
  EXPECT_EQ(m->nq(), 6);
  EXPECT_TRUE(m->frame_names().empty());
  EXPECT_EQ(rd_frame_index(&m->model(), "tool0"), -1);
  const std::string e = error_of([&] { m->frame_index("tool0"); });
  EXPECT_NE(e.find("'tool0'"), std::string::npos) << e;
  EXPECT_NE(e.find("names no frames"), std::string::npos) << e;
  EXPECT_EQ(EngineModel::from_text(puma_text("", ""))->frame_index("tool0"), 7);
}

TEST(EngineModel, BadTextGivesTheParsersReason)
{
  const std::string e = error_of([] { EngineModel::from_text("not a model\n"); });
  EXPECT_EQ(e.rfind("engine model text: ", 0), 0u) << e;
  EXPECT_GT(e.size(), std::string("engine model text: ").size()) << e;
}

TEST(EngineModel, TheTextRecordsTheChecksItWasMadeWith)
{
  const std::string drive = robot_file("config/puma560_drivetrain.yaml");
  const auto bare = EngineModel::from_text(puma_text(drive, ""));
  EXPECT_FALSE(bare->checks().strict);
  EXPECT_FALSE(bare->checks().effort_limits_given);
  const auto both = EngineModel::from_text(puma_text(drive, "--strict --allow-no-effort-limit"));
  EXPECT_TRUE(both->checks().strict);
  EXPECT_TRUE(both->checks().effort_limits_given);
  // the same model either way: the record is a comment to the engine's parser
  EXPECT_EQ(bare->joint_names(), both->joint_names());
  EXPECT_EQ(bare->effort_limits(), both->effort_limits());
}

TEST(EngineModel, TheParameterNamesItselfAndTheCommandThatMakesIt)
{
  const std::string drive = robot_file("config/puma560_drivetrain.yaml");
  const std::string command = "robot-dynamics engine-model --urdf";
  for (const std::string & text : {std::string(), std::string(" \n")}) {
    const std::string e = error_of([&] { EngineModel::from_parameter("robot_model", text, false, false); });
    EXPECT_EQ(e.rfind("no robot model: set robot_model to ", 0), 0u) << e;
    EXPECT_NE(e.find(command), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  const std::string bad = error_of([] { EngineModel::from_parameter("robot_model", "<robot name='x'/>", true, false); });
  EXPECT_EQ(bad.rfind("robot_model: engine model text: ", 0), 0u) << bad;
  EXPECT_NE(bad.find(command), std::string::npos) << bad;
  // made without --strict: refused unless allow_nonphysical_model
  const std::string unchecked = puma_text(drive, "");
  const std::string e = error_of([&] { EngineModel::from_parameter("robot_model", unchecked, false, true); });
  EXPECT_NE(e.find("robot_model was made without the model checks"), std::string::npos) << e;
  EXPECT_NE(e.find("--strict"), std::string::npos) << e;
  EXPECT_NE(e.find("allow_nonphysical_model"), std::string::npos) << e;
  EXPECT_EQ(EngineModel::from_parameter("robot_model", unchecked, true, false)->nq(), 6);
  // made with --allow-no-effort-limit: only where the caller gives its own effort limits
  const std::string own = puma_text(drive, "--strict --allow-no-effort-limit");
  const std::string f = error_of([&] { EngineModel::from_parameter("robot_model", own, false, false); });
  EXPECT_NE(f.find("--allow-no-effort-limit"), std::string::npos) << f;
  EXPECT_NE(f.find("effort_limits"), std::string::npos) << f;
  EXPECT_EQ(EngineModel::from_parameter("robot_model", own, false, true)->nq(), 6);
  EXPECT_EQ(EngineModel::from_parameter("robot_model", puma_text(drive, "--strict"), false, false)->nq(), 6);
}

TEST(EngineModel, TheLoaderRefusesWhatTheStrictChecksFind)
{
  // the bare URDF's link 3 breaks the triangle inequality, which only its drive-train YAML accepts
  EXPECT_EQ(puma_text("", "--strict"), "");
  EXPECT_NE(puma_text(robot_file("config/puma560_drivetrain.yaml"), "--strict"), "");
}

}  // namespace
