#include "robot_dynamics_control/controller_core.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "controller_interface/version.h"

namespace robot_dynamics_control
{

void JointSpaceCore::configure(
  const std::string & urdf, const std::string & drivetrain, const std::vector<std::string> & joints,
  const std::vector<double> & effort_limits)
{
  model_ = EngineModel::from_description(urdf, drivetrain);
  const int nq = model_->nq();
  index_ = model_->indices_of(joints);  // throws on an unknown name, naming the valid ones
  std::vector<bool> named(static_cast<size_t>(nq), false);
  for (size_t i = 0; i < index_.size(); ++i) {
    if (named[static_cast<size_t>(index_[i])]) {
      throw std::runtime_error("joints: '" + joints[i] + "' is named twice");
    }
    named[static_cast<size_t>(index_[i])] = true;
  }
  std::vector<std::string> missing;
  for (int k = 0; k < nq; ++k) {
    if (!named[static_cast<size_t>(k)]) {
      missing.push_back(model_->joint_names()[static_cast<size_t>(k)]);
    }
  }
  if (!missing.empty()) {
    throw std::runtime_error(
      "joints: every joint of the model is controlled, missing " + format_names(missing) +
      " (the model's joints: " + format_names(model_->joint_names()) + ")");
  }
  joints_ = joints;
  n_ = nq;
  const auto size = static_cast<size_t>(nq);
  q.assign(size, 0.0);
  qd.assign(size, 0.0);
  tau.assign(size, 0.0);
  last_valid_q_.assign(size, 0.0);
  zero_.assign(size, 0.0);
  has_valid_ = false;
  status_ = TICK_OK;
  clipped_ = 0;
  if (effort_limits.empty()) {
    limit = model_->effort_limits();
  } else {
    if (effort_limits.size() != joints.size()) {
      throw std::runtime_error(
        "effort_limits: expected " + std::to_string(joints.size()) + " values ordered as joints " +
        format_names(joints) + ", got " + std::to_string(effort_limits.size()));
    }
    limit.assign(size, 0.0);
    for (size_t i = 0; i < effort_limits.size(); ++i) {
      if (!(effort_limits[i] > 0.0)) {
        throw std::runtime_error(
          "effort_limits: limits must be > 0, got " + std::to_string(effort_limits[i]) + " for '" +
          joints[i] + "'");
      }
      limit[static_cast<size_t>(index_[i])] = effort_limits[i];
    }
  }
  for (double & l : limit) {  // a NaN limit (none given) means no limit
    if (std::isnan(l)) {
      l = std::numeric_limits<double>::infinity();
    }
  }
}

std::vector<std::string> JointSpaceCore::command_interface_names() const
{
  std::vector<std::string> names;
  for (const auto & j : joints_) {
    names.push_back(j + "/effort");
  }
  return names;
}

std::vector<std::string> JointSpaceCore::state_interface_names() const
{
  std::vector<std::string> names;
  for (const auto & j : joints_) {
    names.push_back(j + "/position");
    names.push_back(j + "/velocity");
  }
  return names;
}

namespace
{
template<typename Loaned>
size_t find_interface(const std::vector<Loaned> & loaned, const std::string & joint, const std::string & kind)
{
  for (size_t k = 0; k < loaned.size(); ++k) {
    if (loaned[k].get_prefix_name() == joint && loaned[k].get_interface_name() == kind) {
      return k;
    }
  }
  throw std::runtime_error("no '" + joint + "/" + kind + "' interface among the loaned ones");
}
}  // namespace

void JointSpaceCore::bind(
  const std::vector<hardware_interface::LoanedCommandInterface> & commands,
  const std::vector<hardware_interface::LoanedStateInterface> & states)
{
  command_at_.clear();
  position_at_.clear();
  velocity_at_.clear();
  for (const auto & j : joints_) {
    command_at_.push_back(find_interface(commands, j, "effort"));
    position_at_.push_back(find_interface(states, j, "position"));
    velocity_at_.push_back(find_interface(states, j, "velocity"));
  }
}

bool JointSpaceCore::read(const std::vector<hardware_interface::LoanedStateInterface> & states) noexcept
{
  bool finite = true;
  for (size_t i = 0; i < index_.size(); ++i) {
    const auto k = static_cast<size_t>(index_[i]);
    q[k] = states[position_at_[i]].get_value();
    qd[k] = states[velocity_at_[i]].get_value();
    finite = finite && std::isfinite(q[k]) && std::isfinite(qd[k]);
  }
  return finite;
}

void JointSpaceCore::fault() noexcept
{
  status_ = TICK_FAULT;
  if (
    !has_valid_ ||
    rd_gravity_compensation(&model(), last_valid_q_.data(), zero_.data(), 0, tau.data(), &work()) != RD_OK)
  {
    for (double & t : tau) {
      t = 0.0;
    }
  }
}

void JointSpaceCore::finish(
  int rd_status, std::vector<hardware_interface::LoanedCommandInterface> & commands) noexcept
{
  bool ok = rd_status == RD_OK;
  for (size_t k = 0; ok && k < tau.size(); ++k) {
    ok = std::isfinite(tau[k]);
  }
  if (ok) {
    status_ = TICK_OK;
    last_valid_q_ = q;  // same size: a copy, no allocation
    has_valid_ = true;
  } else {
    fault();
  }
  clipped_ = rd_saturate(n_, limit.data(), tau.data());
  if (clipped_ != 0) {
    status_ |= TICK_SATURATED;
  }
  for (size_t i = 0; i < index_.size(); ++i) {
    commands[command_at_[i]].set_value(tau[static_cast<size_t>(index_[i])]);
  }
}

bool JointSpaceCore::to_model_order(const std::vector<double> & values, std::vector<double> & out) const noexcept
{
  if (values.size() == 1) {
    for (double & o : out) {
      o = values[0];
    }
    return true;
  }
  if (values.size() != index_.size()) {
    return false;
  }
  for (size_t i = 0; i < index_.size(); ++i) {
    out[static_cast<size_t>(index_[i])] = values[i];
  }
  return true;
}

std::string robot_description_of(
  const controller_interface::ControllerInterfaceBase & controller, const std::string & parameter)
{
  if (!parameter.empty()) {
    return parameter;
  }
#if CONTROLLER_INTERFACE_VERSION_MAJOR >= 4
  if (!controller.get_robot_description().empty()) {
    return controller.get_robot_description();
  }
  throw std::runtime_error(
    "no robot description: set the robot_description parameter, or give the controller manager one");
#else
  (void)controller;
  throw std::runtime_error(
    "no robot description: set the controller's robot_description parameter (the URDF text)");
#endif
}

}  // namespace robot_dynamics_control
