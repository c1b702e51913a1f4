#include "robot_dynamics_control/pd_gravity_controller.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "pluginlib/class_list_macros.hpp"

namespace robot_dynamics_control
{

using controller_interface::CallbackReturn;

bool PdGravityController::apply_gains() noexcept
{
  return core_.to_model_order(params_.kp, kp_) && core_.to_model_order(params_.kd, kd_);
}

std::string PdGravityController::parameter_error() const
{
  return "kp, kd, hold_damping and max_tracking_error: give one value (every joint) or " +
         std::to_string(core_.n()) + " ordered as joints " + format_names(params_.joints) + "; got kp " +
         std::to_string(params_.kp.size()) + ", kd " + std::to_string(params_.kd.size());
}

CallbackReturn PdGravityController::configure_law()
{
  const auto nq = static_cast<size_t>(core_.nq());
  for (auto * v : {&kp_, &kd_, &qr_, &qdr_, &q0_, &delta_, &goal_qd_}) {
    v->assign(nq, 0.0);
  }
  params_.kp.reserve(static_cast<size_t>(core_.n()));
  params_.kd.reserve(static_cast<size_t>(core_.n()));
  if (!apply_gains()) {
    return CallbackReturn::ERROR;
  }
  {
    std::lock_guard<std::mutex> lock(receive_mutex_);
    incoming_.q.assign(nq, 0.0);
    incoming_.qd.assign(nq, 0.0);
    incoming_.sequence = received_;
    goal_.initRT(incoming_);
  }
  subscribe_reference("~/reference", [this](const trajectory_msgs::msg::JointTrajectory & msg) {
    return set_reference(msg);
  });
  return CallbackReturn::SUCCESS;
}

std::string PdGravityController::set_reference(const trajectory_msgs::msg::JointTrajectory & msg)
{
  if (core_.n() == 0) {
    return "the controller is not configured";
  }
  const auto & joints = core_.joints();
  std::vector<size_t> column(joints.size(), msg.joint_names.size());
  for (size_t c = 0; c < msg.joint_names.size(); ++c) {
    const auto it = std::find(joints.begin(), joints.end(), msg.joint_names[c]);
    if (it == joints.end()) {
      return "unknown joint '" + msg.joint_names[c] + "'. Valid names: " + format_names(joints);
    }
    if (column[static_cast<size_t>(it - joints.begin())] != msg.joint_names.size()) {
      return "joint '" + msg.joint_names[c] + "' is named twice";
    }
    column[static_cast<size_t>(it - joints.begin())] = c;
  }
  for (size_t i = 0; i < joints.size(); ++i) {
    if (column[i] == msg.joint_names.size()) {
      return "the reference does not name joint '" + joints[i] + "'";
    }
  }
  if (msg.points.empty()) {
    return "the reference has no points";
  }
  const auto & point = msg.points.back();
  const size_t m = msg.joint_names.size();
  if (point.positions.size() != m) {
    return std::to_string(point.positions.size()) + " positions for " + std::to_string(m) + " joints";
  }
  if (!point.velocities.empty() && point.velocities.size() != m) {
    return std::to_string(point.velocities.size()) + " velocities for " + std::to_string(m) + " joints";
  }
  Goal goal;
  goal.q.assign(static_cast<size_t>(core_.nq()), 0.0);
  goal.qd.assign(static_cast<size_t>(core_.nq()), 0.0);
  for (size_t i = 0; i < joints.size(); ++i) {
    const auto k = static_cast<size_t>(core_.index()[i]);
    goal.q[k] = point.positions[column[i]];
    goal.qd[k] = point.velocities.empty() ? 0.0 : point.velocities[column[i]];
    if (!std::isfinite(goal.q[k]) || !std::isfinite(goal.qd[k])) {
      return "non-finite goal for joint '" + joints[i] + "'";
    }
    if (std::abs(goal.qd[k]) > core_.velocity_limit[k]) {
      return "a goal velocity of " + std::to_string(goal.qd[k]) + " is above the velocity limit " +
             std::to_string(core_.velocity_limit[k]) + " of joint '" + joints[i] + "'";
    }
  }
  const std::string outside = outside_limits(goal.q);
  if (!outside.empty()) {
    return outside;
  }
  std::lock_guard<std::mutex> lock(receive_mutex_);
  goal.sequence = ++received_;
  goal_.writeFromNonRT(goal);
  return "";
}

void PdGravityController::activate_reference()
{
  std::lock_guard<std::mutex> lock(receive_mutex_);
  active_ = received_;  // a goal received before activation is not replayed
}

void PdGravityController::latch_hold()
{
  for (int k = 0; k < core_.nq(); ++k) {  // within the joints' limits, whatever the state read
    qr_[static_cast<size_t>(k)] = core_.clamp_position(k, core_.q[static_cast<size_t>(k)]);
  }
  std::fill(qdr_.begin(), qdr_.end(), 0.0);
  std::fill(delta_.begin(), delta_.end(), 0.0);
  std::fill(goal_qd_.begin(), goal_qd_.end(), 0.0);
  q0_ = qr_;
  duration_ = 0.0;
  t0_ = 0.0;
}

void PdGravityController::follow(const Goal & goal, double now) noexcept
{
  if (goal.sequence != active_) {  // a new goal: a profile from the reference of this moment
    active_ = goal.sequence;
    q0_ = qr_;
    double duration = 0.0;
    for (int k : core_.index()) {  // a cubic's peak velocity is 1.5 |delta| / T
      const auto j = static_cast<size_t>(k);
      delta_[j] = goal.q[j] - q0_[j];
      goal_qd_[j] = goal.qd[j];
      const double v = params_.goal_velocity_scaling * core_.velocity_limit[j];
      if (std::isfinite(v) && v > 0.0) {
        duration = std::max(duration, 1.5 * std::abs(delta_[j]) / v);
      }
    }
    duration_ = duration;
    t0_ = now;
  }
  const double s = duration_ > 0.0 ? std::min(std::max((now - t0_) / duration_, 0.0), 1.0) : 1.0;
  for (int k : core_.index()) {
    const auto j = static_cast<size_t>(k);
    qr_[j] = q0_[j] + delta_[j] * s * s * (3.0 - 2.0 * s);
    qdr_[j] = s < 1.0 ? delta_[j] * 6.0 * s * (1.0 - s) / duration_ : goal_qd_[j];
  }
}

controller_interface::return_type PdGravityController::update(
  const rclcpp::Time & time, const rclcpp::Duration & period)
{
  refresh_parameters();
  const Goal & goal = *goal_.readFromRT();
  return tick(time, period, [this, &goal, &time] {
    follow(goal, time.seconds());
    for (int k : core_.others()) {  // the joints not commanded: no PD term
      qr_[static_cast<size_t>(k)] = core_.q[static_cast<size_t>(k)];
      qdr_[static_cast<size_t>(k)] = core_.qd[static_cast<size_t>(k)];
    }
    const rd_pd_gains gains{kp_.data(), kd_.data()};
    const rd_reference reference{qr_.data(), qdr_.data(), nullptr};
    const int status = rd_pd_gravity(
      &core_.model(), &gains, core_.q.data(), core_.qd.data(), &reference, core_.tau.data(), &core_.work());
    if (status == RD_OK && params_.friction_feedforward) {
      for (int k : core_.index()) {  // the friction feed-forward at the reference velocity, Khalil [7.26]
        const auto j = static_cast<size_t>(k);
        core_.tau[j] += rd_friction(&core_.model(), k, qdr_[j], core_.friction_smoothing);
      }
    }
    return status;
  });
}

}  // namespace robot_dynamics_control

PLUGINLIB_EXPORT_CLASS(robot_dynamics_control::PdGravityController, controller_interface::ControllerInterface)
