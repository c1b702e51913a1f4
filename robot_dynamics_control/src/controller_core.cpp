#include "robot_dynamics_control/controller_core.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>


namespace robot_dynamics_control
{

StopBehaviour stop_behaviour_of(const std::string & name)
{
  if (name == "hold") {
    return StopBehaviour::hold;
  }
  if (name == "zero") {
    return StopBehaviour::zero;
  }
  if (name == "brake") {
    return StopBehaviour::brake;
  }
  throw std::runtime_error("stop_behaviour: unknown '" + name + "'. Valid names: ['hold', 'zero', 'brake']");
}

void JointSpaceCore::configure(const CoreConfig & config)
{
  const auto & joints = config.joints;
  model_ = EngineModel::from_parameter(
    "robot_model", config.robot_model, config.allow_nonphysical_model, !config.effort_limits.empty());
  nq_ = model_->nq();
  index_ = model_->indices_of(joints);  // throws on an unknown name, naming the valid ones
  std::vector<bool> named(static_cast<size_t>(nq_), false);
  for (size_t i = 0; i < index_.size(); ++i) {
    if (named[static_cast<size_t>(index_[i])]) {
      throw std::runtime_error("joints: '" + joints[i] + "' is named twice");
    }
    named[static_cast<size_t>(index_[i])] = true;
  }
  others_.clear();  // read from the state interfaces, never commanded (e.g. a gripper's)
  for (int k = 0; k < nq_; ++k) {
    if (!named[static_cast<size_t>(k)]) {
      others_.push_back(k);
    }
  }
  joints_ = joints;
  if (!config.command_joints.empty() && config.command_joints.size() != joints.size()) {
    throw std::runtime_error(
      "command_joints: expected none (the joints' own interfaces) or " + std::to_string(joints.size()) +
      " names ordered as joints " + format_names(joints) + ", got " + std::to_string(config.command_joints.size()));
  }
  // each joint's effort goes to an interface of that joint: <joint> or <prefix>/<joint>, once
  for (size_t i = 0; i < config.command_joints.size(); ++i) {
    const std::string & c = config.command_joints[i];
    const std::string & j = joints[i];
    const bool names_it = c == j || (c.size() > j.size() && c.compare(c.size() - j.size(), j.size(), j) == 0 &&
                                     c[c.size() - j.size() - 1] == '/');
    if (!names_it || std::count(config.command_joints.begin(), config.command_joints.end(), c) > 1) {
      throw std::runtime_error(
        "command_joints: entry " + std::to_string(i) + " '" + c + "' must name joint '" + j + "' (as '" + j +
        "' or '<controller>/" + j + "', each once), ordered as joints " + format_names(joints));
    }
  }
  command_joints_ = config.command_joints.empty() ? joints : config.command_joints;
  law_model_ = model_->model();  // the same arrays (read-only); gravity of its own
  if (config.gravity_compensated_by_hardware) {
    law_model_.gravity[0] = law_model_.gravity[1] = law_model_.gravity[2] = 0.0;
  }
  stop_ = config.stop;
  const auto size = static_cast<size_t>(nq_);
  for (auto * v : {&q, &qd, &tau, &last_valid_q_, &zero_, &max_tracking_error}) {
    v->assign(size, 0.0);
  }
  hold_damping.assign(size, 0.0);
  mass_.assign(size * size, 0.0);
  period = 0.0;
  lower = model_->position_lower();
  upper = model_->position_upper();
  velocity_limit = model_->velocity_limits();
  has_valid_ = state_ok_ = limited_ = tracking_latched_ = false;
  status_ = TICK_OK;
  clipped_ = 0;
  fault_ = Fault::none;
  fault_joint_ = -1;
  if (config.effort_limits.empty()) {
    limit = model_->effort_limits();
    for (int k : index_) {
      if (!std::isfinite(limit[static_cast<size_t>(k)]) && !config.allow_nonphysical_model) {
        throw std::runtime_error(
          "joint '" + model_->joint_names()[static_cast<size_t>(k)] +
          "' has no effort limit in the description: give effort_limits (one per joint), or set "
          "allow_nonphysical_model to command it unsaturated");
      }
    }
  } else {
    if (config.effort_limits.size() != joints.size()) {
      throw std::runtime_error(
        "effort_limits: expected " + std::to_string(joints.size()) + " values ordered as joints " +
        format_names(joints) + ", got " + std::to_string(config.effort_limits.size()));
    }
    limit = model_->effort_limits();
    for (size_t i = 0; i < config.effort_limits.size(); ++i) {
      if (!(config.effort_limits[i] > 0.0) || std::isnan(config.effort_limits[i])) {
        throw std::runtime_error(
          "effort_limits: limits must be > 0, got " + std::to_string(config.effort_limits[i]) + " for '" +
          joints[i] + "'");
      }
      limit[static_cast<size_t>(index_[i])] = config.effort_limits[i];
    }
  }
  for (double & l : limit) {  // a NaN limit (none given) means no limit
    if (std::isnan(l)) {
      l = std::numeric_limits<double>::infinity();
    }
  }
  // the largest M_jj over 3^min(nq, 6) poses (each joint at its limits' quarter points; the others
  // cycling), then a = limit / (2 M_jj): half the effort is left for gravity and the law
  std::vector<double> pose(size), M(size * size), largest(size, 0.0);
  const int combos = static_cast<int>(std::pow(3.0, std::min(nq_, 6)));
  for (int c = 0; c < combos; ++c) {
    int code = c;
    for (int k = 0; k < nq_; ++k) {
      const auto j = static_cast<size_t>(k);
      const double lo = std::isfinite(lower[j]) ? lower[j] : -M_PI, hi = std::isfinite(upper[j]) ? upper[j] : M_PI;
      pose[j] = lo + (hi - lo) * (0.25 * static_cast<double>(1 + code % 3));
      code = k < 6 ? code / 3 : code;
    }
    if (rd_crba(&model_->model(), pose.data(), M.data(), &work()) == RD_OK) {
      for (size_t j = 0; j < size; ++j) {
        largest[j] = std::max(largest[j], M[j * size + j]);
      }
    }
  }
  braking_acceleration.assign(size, std::numeric_limits<double>::infinity());
  for (size_t j = 0; j < size; ++j) {
    if (largest[j] > 0.0 && std::isfinite(limit[j])) {
      braking_acceleration[j] = limit[j] / (2.0 * largest[j]);
    }
  }
}

std::vector<std::string> JointSpaceCore::command_interface_names() const
{
  std::vector<std::string> names;
  for (const auto & j : command_joints_) {
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
  for (int k : others_) {
    names.push_back(model_->joint_names()[static_cast<size_t>(k)] + "/position");
    names.push_back(model_->joint_names()[static_cast<size_t>(k)] + "/velocity");
  }
  return names;
}

namespace
{
template<typename Loaned>
size_t find_interface(const std::vector<Loaned> & loaned, const std::string & joint, const std::string & kind)
{
  const std::string full = joint + "/" + kind;  // a chained controller's reference: "<controller>/<joint>/effort"
  for (size_t k = 0; k < loaned.size(); ++k) {
    if (loaned[k].get_prefix_name() + "/" + loaned[k].get_interface_name() == full) {
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
  position_at_.assign(static_cast<size_t>(nq_), 0);
  velocity_at_.assign(static_cast<size_t>(nq_), 0);
  for (size_t i = 0; i < joints_.size(); ++i) {
    command_at_.push_back(find_interface(commands, command_joints_[i], "effort"));
  }
  for (int k = 0; k < nq_; ++k) {
    const auto & name = model_->joint_names()[static_cast<size_t>(k)];
    position_at_[static_cast<size_t>(k)] = find_interface(states, name, "position");
    velocity_at_[static_cast<size_t>(k)] = find_interface(states, name, "velocity");
  }
}

void JointSpaceCore::reset() noexcept
{
  has_valid_ = state_ok_ = limited_ = tracking_latched_ = false;
  limited_joint_ = -1;
  fault_ = Fault::none;
  fault_joint_ = -1;
  status_ = TICK_OK;
  clipped_ = 0;
}

bool JointSpaceCore::read(const std::vector<hardware_interface::LoanedStateInterface> & states) noexcept
{
  int bad = -1;
  for (int k = 0; k < nq_; ++k) {
    const auto j = static_cast<size_t>(k);
    q[j] = states[position_at_[j]].get_value();
    qd[j] = states[velocity_at_[j]].get_value();
    if (bad < 0 && !(std::isfinite(q[j]) && std::isfinite(qd[j]))) {
      bad = k;
    }
  }
  state_ok_ = bad < 0;
  if (!state_ok_) {
    set_fault(Fault::state, bad, 0.0, 0.0);
  }
  return state_ok_;
}

void JointSpaceCore::set_fault(Fault kind, int joint, double value, double limit) noexcept
{
  if (kind != fault_ || joint != fault_joint_) {
    ++fault_count_;
  }
  fault_ = kind;
  fault_joint_ = joint;
  fault_value_ = value;
  fault_limit_ = limit;
}

void JointSpaceCore::stop_output(bool damped) noexcept
{
  if (stop_ == StopBehaviour::zero) {
    std::fill(tau.begin(), tau.end(), 0.0);
    return;
  }
  if (stop_ == StopBehaviour::brake) {
    std::fill(tau.begin(), tau.end(), std::numeric_limits<double>::quiet_NaN());
    return;
  }
  // hold: Q(q) of the current pose (the last valid one when the state is not finite), Khalil [9.12]
  const bool current = state_ok_;
  if (!current && !has_valid_) {
    std::fill(tau.begin(), tau.end(), 0.0);  // no pose ever seen: nothing to hold against
    return;
  }
  if (current && damped) {
    hold_output();
    return;
  }
  const double * pose = current ? q.data() : last_valid_q_.data();
  if (rd_gravity_compensation(&law_model_, pose, zero_.data(), 0, tau.data(), &work()) != RD_OK) {
    std::fill(tau.begin(), tau.end(), 0.0);
  }
}

bool JointSpaceCore::hold_output() noexcept
{
  if (rd_gravity_compensation(&law_model_, q.data(), zero_.data(), 0, tau.data(), &work()) != RD_OK) {
    std::fill(tau.begin(), tau.end(), 0.0);
    return false;
  }
  const bool cap = period > 0.0 && rd_crba(&law_model_, q.data(), mass_.data(), &work()) == RD_OK;
  const size_t n = tau.size();
  for (size_t k = 0; k < n; ++k) {
    const double d = cap ? std::min(hold_damping[k], 0.5 * mass_[k * n + k] / period) : hold_damping[k];
    tau[k] -= d * qd[k];
  }
  return true;
}

void JointSpaceCore::stop(std::vector<hardware_interface::LoanedCommandInterface> & commands, bool damped) noexcept
{
  stop_output(damped);
  status_ = TICK_HOLDING | (fault_ != Fault::none ? TICK_FAULT : 0) | (limited_ ? TICK_LIMITED : 0);
  limited_ = false;  // the next tick's clamping marks it again
  write(commands);
}

void JointSpaceCore::finish(
  int rd_status, const double * q_ref, std::vector<hardware_interface::LoanedCommandInterface> & commands) noexcept
{
  bool ok = state_ok_ && rd_status == RD_OK;
  for (size_t k = 0; ok && k < tau.size(); ++k) {
    ok = std::isfinite(tau[k]);
  }
  if (state_ok_ && !ok) {
    if (missing_reference_ >= 0) {
      set_fault(Fault::reference, missing_reference_, 0.0, 0.0);
    } else {
      set_fault(Fault::law, -1, static_cast<double>(rd_status), 0.0);
    }
  }
  missing_reference_ = -1;
  if (ok && q_ref != nullptr && !tracking_latched_) {
    for (int k : index_) {  // |q_r - q| against max_tracking_error (0: none)
      const auto j = static_cast<size_t>(k);
      const double e = std::abs(q_ref[j] - q[j]);
      if (max_tracking_error[j] > 0.0 && e > max_tracking_error[j]) {
        set_fault(Fault::tracking, k, e, max_tracking_error[j]);
        tracking_latched_ = true;
        break;
      }
    }
  }
  if (tracking_latched_) {
    ok = false;
  }
  if (ok) {
    fault_ = Fault::none;
    fault_joint_ = -1;
    last_valid_q_ = q;  // same size: a copy, no allocation
    has_valid_ = true;
  } else if (state_ok_) {
    last_valid_q_ = q;
    has_valid_ = true;
  }
  if (!ok) {
    stop(commands, true);
    status_ |= TICK_FAULT;
    return;
  }
  status_ = limited_ ? TICK_LIMITED : TICK_OK;
  limited_ = false;  // the next tick's clamping marks it again
  write(commands);
}

void JointSpaceCore::write(std::vector<hardware_interface::LoanedCommandInterface> & commands) noexcept
{
  clipped_ = 0;
  for (size_t i = 0; i < index_.size(); ++i) {  // the commanded joints' efforts, clipped to the limits
    const auto k = static_cast<size_t>(index_[i]);
    double t = tau[k];
    if (t > limit[k]) {  // NaN (the brake) passes
      t = limit[k], clipped_ |= int64_t{1} << std::min<size_t>(i, 62);
    } else if (t < -limit[k]) {
      t = -limit[k], clipped_ |= int64_t{1} << std::min<size_t>(i, 62);
    }
    tau[k] = t;
    commands[command_at_[i]].set_value(t);
  }
  if (clipped_ != 0) {
    status_ |= TICK_SATURATED;
  }
}

double JointSpaceCore::clamp_position(int k, double x) const noexcept
{
  const auto j = static_cast<size_t>(k);
  return std::min(std::max(x, lower[j]), upper[j]);
}

double JointSpaceCore::clamp_velocity(int k, double v) const noexcept
{
  const double l = velocity_limit[static_cast<size_t>(k)];
  return std::min(std::max(v, -l), l);
}

bool JointSpaceCore::to_model_order(const std::vector<double> & values, std::vector<double> & out) const noexcept
{
  if (values.size() == 1) {
    for (int k : index_) {
      out[static_cast<size_t>(k)] = values[0];
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

std::string fault_reason(Fault kind, const std::string & joint_name, double value, double limit)
{
  const std::string joint = joint_name.empty() ? std::string("?") : "'" + joint_name + "'";
  char numbers[96];
  switch (kind) {
    case Fault::none:
      return "";
    case Fault::state:
      return "the measured state of joint " + joint + " is not finite: holding the last valid pose";
    case Fault::law:
      return "the law gave no finite effort (engine status " + std::to_string(static_cast<int>(value)) + "): holding";
    case Fault::reference:
      return "no reference for joint " + joint + " (NaN: nothing in front of the controller writes it): the stop "
             "behaviour until one arrives";
    case Fault::tracking:
      std::snprintf(numbers, sizeof numbers, "%.4g, above max_tracking_error %.4g", value, limit);
      return "tracking error of joint " + joint + " is " + numbers +
             ": stop behaviour until the controller is activated again";
  }
  return "";
}

}  // namespace robot_dynamics_control
