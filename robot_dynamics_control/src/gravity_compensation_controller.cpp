#include "robot_dynamics_control/gravity_compensation_controller.hpp"

#include "pluginlib/class_list_macros.hpp"

namespace robot_dynamics_control
{

controller_interface::return_type GravityCompensationController::update(
  const rclcpp::Time &, const rclcpp::Duration &)
{
  param_listener_->try_get_params(params_);  // friction_feedforward may change while running
  return tick([this] {
    return rd_gravity_compensation(
      &core_.model(), core_.q.data(), core_.qd.data(), params_.friction_feedforward ? 1 : 0, core_.tau.data(),
      &core_.work());
  });
}

}  // namespace robot_dynamics_control

PLUGINLIB_EXPORT_CLASS(
  robot_dynamics_control::GravityCompensationController, controller_interface::ControllerInterface)
