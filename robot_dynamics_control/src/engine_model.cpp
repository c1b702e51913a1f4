#include "robot_dynamics_control/engine_model.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace robot_dynamics_control
{
namespace
{

/// The checks recorded in `text` (its `# checks:` line; none: nothing checked).
ModelChecks checks_of(const std::string & text)
{
  ModelChecks checks;
  std::istringstream in(text);
  const std::string tag = kModelChecksLine;
  for (std::string line; std::getline(in, line);) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line.compare(start, tag.size(), tag) != 0) {
      continue;
    }
    std::istringstream words(line.substr(start + tag.size()));
    for (std::string word; words >> word;) {
      checks.strict = checks.strict || word == "strict";
      checks.effort_limits_given = checks.effort_limits_given || word == "allow-no-effort-limit";
    }
  }
  return checks;
}

}  // namespace

std::string model_parameter_help(const std::string & parameter)
{
  return "set " + parameter + " to the text that `robot-dynamics engine-model --urdf ROBOT.urdf "
         "[--drivetrain DRIVE.yaml] --strict` prints (robot_dynamics_bringup's arm.launch.py sets it; "
         "robot_dynamics.ros.launch_support.robot_model_text gives it to a launch file)";
}

std::string format_names(const std::vector<std::string> & names)
{
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    s += (i ? ", '" : "'") + names[i] + "'";
  }
  return s + "]";
}

std::shared_ptr<EngineModel> EngineModel::from_parameter(
  const std::string & parameter, const std::string & text, bool allow_nonphysical_model, bool own_effort_limits)
{
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw std::runtime_error("no robot model: " + model_parameter_help(parameter));
  }
  std::shared_ptr<EngineModel> model;
  try {
    model = from_text(text);
  } catch (const std::runtime_error & e) {
    throw std::runtime_error(parameter + ": " + e.what() + "; " + model_parameter_help(parameter));
  }
  if (allow_nonphysical_model) {
    return model;
  }
  const ModelChecks & checks = model->checks();
  if (!checks.strict) {
    throw std::runtime_error(
      parameter + " was made without the model checks (no '" + kModelChecksLine + " strict' line): " +
      model_parameter_help(parameter) + ", or set allow_nonphysical_model to accept it unchecked");
  }
  if (checks.effort_limits_given && !own_effort_limits) {
    throw std::runtime_error(
      parameter + " was made with --allow-no-effort-limit, and no effort limits are given here: make it "
      "without that option, give effort_limits, or set allow_nonphysical_model");
  }
  return model;
}

std::shared_ptr<EngineModel> EngineModel::from_text(const std::string & text)
{
  char err[512] = {0};
  // The workspace's size depends on nb and nq, which the text holds: read them first, then build
  // the model with the workspace at the end of its block.
  rd_model_size size{};
  if (rd_model_text_size(text.c_str(), &size, err, sizeof(err)) != RD_OK) {
    throw std::runtime_error(std::string("engine model text: ") + err);
  }
  const int nb = size.nb, nq = size.nq;

  std::shared_ptr<EngineModel> self(new EngineModel());
  void * work_memory = nullptr;
  if (
    rd_model_parse(&self->model_, text.c_str(), rd_work_bytes(nb, nq), &work_memory, err, sizeof(err)) !=
    RD_OK)
  {
    throw std::runtime_error(std::string("engine model text: ") + err);
  }
  rd_work_bind(&self->work_, work_memory, nb, nq);
  const rd_model & m = self->model_;
  if (m.joint_name == nullptr || m.effort_limit == nullptr) {
    throw std::runtime_error("engine model text: no joint_names or effort_limit line");
  }
  self->joint_names_.reserve(static_cast<size_t>(m.nq));
  for (int k = 0; k < m.nq; ++k) {
    self->joint_names_.emplace_back(m.joint_name[k]);
    self->effort_limits_.push_back(m.effort_limit[k]);
    self->position_lower_.push_back(m.position_lower[k]);
    self->position_upper_.push_back(m.position_upper[k]);
    self->velocity_limits_.push_back(m.velocity_limit[k]);
  }
  if (m.frame_name != nullptr) {
    self->frame_names_.assign(m.frame_name, m.frame_name + m.nf);
  }
  // The first line: "robot_dynamics-engine-model 1 <robot name>"
  std::istringstream first(text.substr(0, text.find('\n')));
  std::string tag, version;
  first >> tag >> version;
  std::getline(first >> std::ws, self->robot_name_);
  self->checks_ = checks_of(text);
  return self;
}

EngineModel::~EngineModel() { rd_model_free(&model_); }

std::vector<int> EngineModel::indices_of(const std::vector<std::string> & names) const
{
  std::vector<int> out;
  out.reserve(names.size());
  for (const auto & name : names) {
    const int k = rd_joint_index(&model_, name.c_str());
    if (k < 0) {
      throw std::runtime_error(
        "Invalid joint name '" + name + "'. Valid names: " + format_names(joint_names_));
    }
    out.push_back(k);
  }
  return out;
}

int EngineModel::frame_index(const std::string & name) const
{
  const int k = rd_frame_index(&model_, name.c_str());
  if (k < 0) {
    if (frame_names_.empty()) {
      throw std::runtime_error(
        "Invalid frame name '" + name + "': the model text names no frames (no frame_names line); make it "
        "again with `robot-dynamics engine-model`");
    }
    throw std::runtime_error("Invalid frame name '" + name + "'. Valid names: " + format_names(frame_names_));
  }
  return k;
}

}  // namespace robot_dynamics_control
