#include "robot_dynamics_control/gravity_compensation_controller.hpp"

#include "pluginlib/class_list_macros.hpp"

namespace robot_dynamics_control
{

controller_interface::return_type GravityCompensationController::update(
  const rclcpp::Time & time, const rclcpp::Duration & period)
{
  refresh_parameters();  // friction_feedforward may change while running
  return tick(time, period, [this] {
    const int status = rd_gravity_compensation(
      &core_.model(), core_.q.data(), core_.qd.data(), 0, core_.tau.data(), &core_.work());
    if (status == RD_OK && params_.friction_feedforward) {
      for (int k : core_.index()) {  // the friction at the measured velocity, Khalil [7.26], its sign smoothed
        const auto j = static_cast<size_t>(k);
        core_.tau[j] += rd_friction(&core_.model(), k, core_.qd[j], core_.friction_smoothing);
      }
    }
    return status;
  });
}

}  // namespace robot_dynamics_control

PLUGINLIB_EXPORT_CLASS(
  robot_dynamics_control::GravityCompensationController, controller_interface::ControllerInterface)
