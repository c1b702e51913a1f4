#include "robot_dynamics_control/gravity_compensation_controller.hpp"

#include <exception>

#include "pluginlib/class_list_macros.hpp"

namespace robot_dynamics_control
{

using controller_interface::CallbackReturn;

CallbackReturn GravityCompensationController::on_init()
{
  try {
    param_listener_ = std::make_shared<gravity_compensation_controller::ParamListener>(get_node());
    params_ = param_listener_->get_params();
  } catch (const std::exception & e) {
    RCLCPP_ERROR(get_node()->get_logger(), "parameters: %s", e.what());
    return CallbackReturn::ERROR;
  }
  return CallbackReturn::SUCCESS;
}

controller_interface::InterfaceConfiguration GravityCompensationController::command_interface_configuration() const
{
  return {controller_interface::interface_configuration_type::INDIVIDUAL, core_.command_interface_names()};
}

controller_interface::InterfaceConfiguration GravityCompensationController::state_interface_configuration() const
{
  return {controller_interface::interface_configuration_type::INDIVIDUAL, core_.state_interface_names()};
}

CallbackReturn GravityCompensationController::on_configure(const rclcpp_lifecycle::State &)
{
  try {
    params_ = param_listener_->get_params();
    core_.configure(
      robot_description_of(*this, params_.robot_description), params_.drivetrain, params_.joints,
      params_.effort_limits);
  } catch (const std::exception & e) {
    RCLCPP_ERROR(get_node()->get_logger(), "%s", e.what());
    return CallbackReturn::ERROR;
  }
  RCLCPP_INFO(
    get_node()->get_logger(), "gravity compensation of '%s' on %d joints",
    core_.engine().robot_name().c_str(), core_.n());
  return CallbackReturn::SUCCESS;
}

CallbackReturn GravityCompensationController::on_activate(const rclcpp_lifecycle::State &)
{
  try {
    core_.bind(command_interfaces_, state_interfaces_);
  } catch (const std::exception & e) {
    RCLCPP_ERROR(get_node()->get_logger(), "%s", e.what());
    return CallbackReturn::ERROR;
  }
  return CallbackReturn::SUCCESS;
}

CallbackReturn GravityCompensationController::on_deactivate(const rclcpp_lifecycle::State &)
{
  for (auto & command : command_interfaces_) {
    command.set_value(0.0);
  }
  return CallbackReturn::SUCCESS;
}

controller_interface::return_type GravityCompensationController::update(
  const rclcpp::Time &, const rclcpp::Duration &)
{
  param_listener_->try_get_params(params_);  // friction_feedforward may change while running
  int status = RD_BAD_INPUT;
  if (core_.read(state_interfaces_)) {
    status = rd_gravity_compensation(
      &core_.model(), core_.q.data(), core_.qd.data(), params_.friction_feedforward ? 1 : 0, core_.tau.data(),
      &core_.work());
  }
  core_.finish(status, command_interfaces_);
  return controller_interface::return_type::OK;
}

}  // namespace robot_dynamics_control

PLUGINLIB_EXPORT_CLASS(
  robot_dynamics_control::GravityCompensationController, controller_interface::ControllerInterface)
