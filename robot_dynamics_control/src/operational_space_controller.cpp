#include "robot_dynamics_control/operational_space_controller.hpp"

#include "pluginlib/class_list_macros.hpp"

namespace robot_dynamics_control
{

std::string OperationalSpaceController::law_name() const
{
  return "operational-space control of frame '" + params_.frame + "'";
}

void OperationalSpaceController::reserve_gains()
{
  for (auto * v : {&params_.omega, &params_.xi, &params_.kp, &params_.kd}) {
    v->reserve(6);
  }
}

bool OperationalSpaceController::law_gains() noexcept
{
  const auto & p = params_;
  if (p.kp.empty() != p.kd.empty()) {
    return false;  // both or neither
  }
  const bool direct = !p.kp.empty();
  if ((direct && (p.kp.size() != 6 || p.kd.size() != 6)) || p.omega.size() != 6 || p.xi.size() != 6) {
    return false;
  }
  for (size_t k = 0; k < 6; ++k) {  // Kp = omega^2, Kd = 2 xi omega (Khalil [9.26]) unless given
    kp_[k] = direct ? p.kp[k] : p.omega[k] * p.omega[k];
    kd_[k] = direct ? p.kd[k] : 2.0 * p.xi[k] * p.omega[k];
  }
  options_.damping_ratio = 1.0;  // not read by this law
  return true;
}

}  // namespace robot_dynamics_control

PLUGINLIB_EXPORT_CLASS(
  robot_dynamics_control::OperationalSpaceController, controller_interface::ChainableControllerInterface)
