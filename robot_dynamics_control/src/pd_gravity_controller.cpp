#include "robot_dynamics_control/pd_gravity_controller.hpp"

#include <algorithm>
#include <cmath>

#include "pluginlib/class_list_macros.hpp"

namespace robot_dynamics_control
{

using controller_interface::CallbackReturn;

bool PdGravityController::apply_gains() noexcept
{
  return core_.to_model_order(params_.kp, kp_) && core_.to_model_order(params_.kd, kd_);
}

CallbackReturn PdGravityController::configure_law()
{
  const auto n = static_cast<size_t>(core_.n());
  kp_.assign(n, 0.0);
  kd_.assign(n, 0.0);
  if (!apply_gains()) {
    RCLCPP_ERROR(
      get_node()->get_logger(), "kp and kd: give one value (every joint) or %zu ordered as joints %s; got %zu and %zu",
      n, format_names(params_.joints).c_str(), params_.kp.size(), params_.kd.size());
    return CallbackReturn::ERROR;
  }
  incoming_.q.assign(n, 0.0);
  incoming_.qd.assign(n, 0.0);
  goal_.initRT(incoming_);
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
  goal.q.assign(static_cast<size_t>(core_.n()), 0.0);
  goal.qd.assign(static_cast<size_t>(core_.n()), 0.0);
  for (size_t i = 0; i < joints.size(); ++i) {
    const auto k = static_cast<size_t>(core_.index()[i]);
    goal.q[k] = point.positions[column[i]];
    goal.qd[k] = point.velocities.empty() ? 0.0 : point.velocities[column[i]];
    if (!std::isfinite(goal.q[k]) || !std::isfinite(goal.qd[k])) {
      return "non-finite goal for joint '" + joints[i] + "'";
    }
  }
  goal_.writeFromNonRT(goal);
  return "";
}

void PdGravityController::activate_reference()
{
  // hold the position at activation until a reference arrives
  Goal hold;
  hold.qd.assign(static_cast<size_t>(core_.n()), 0.0);
  core_.read(state_interfaces_);
  hold.q = core_.q;
  goal_.writeFromNonRT(hold);
}

controller_interface::return_type PdGravityController::update(const rclcpp::Time &, const rclcpp::Duration &)
{
  // gains changed while running: a copy into the same-sized Params, then into kp_, kd_ (a wrong
  // size keeps the previous gains)
  if (param_listener_->try_get_params(params_)) {
    apply_gains();
  }
  const Goal & goal = *goal_.readFromRT();
  return tick([this, &goal] {
    const int status = rd_pd_gravity(
      &core_.model(), kp_.data(), kd_.data(), core_.q.data(), core_.qd.data(), goal.q.data(), goal.qd.data(),
      core_.tau.data(), &core_.work());
    if (status == RD_OK && params_.friction_feedforward) {
      for (int k = 0; k < core_.n(); ++k) {  // the friction feed-forward at the goal velocity, Khalil [7.26]
        core_.tau[static_cast<size_t>(k)] += rd_friction(&core_.model(), k, goal.qd[static_cast<size_t>(k)], 0.0);
      }
    }
    return status;
  });
}

}  // namespace robot_dynamics_control

PLUGINLIB_EXPORT_CLASS(robot_dynamics_control::PdGravityController, controller_interface::ControllerInterface)
