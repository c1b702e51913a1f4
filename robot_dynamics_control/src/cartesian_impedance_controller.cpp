#include "robot_dynamics_control/cartesian_impedance_controller.hpp"

#include "pluginlib/class_list_macros.hpp"

namespace robot_dynamics_control
{

std::string CartesianImpedanceController::law_name() const
{
  return "Cartesian impedance of frame '" + params_.frame + "'";
}

void CartesianImpedanceController::reserve_gains() { params_.stiffness.reserve(6); }

bool CartesianImpedanceController::law_gains() noexcept
{
  if (params_.stiffness.size() != 6) {
    return false;
  }
  for (size_t k = 0; k < 6; ++k) {
    kp_[k] = params_.stiffness[k];
  }
  options_.damping_ratio = params_.damping_ratio;
  return true;
}

}  // namespace robot_dynamics_control

PLUGINLIB_EXPORT_CLASS(
  robot_dynamics_control::CartesianImpedanceController, controller_interface::ChainableControllerInterface)
