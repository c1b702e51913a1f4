// Gravity compensation in ros2_control's loop: effort = Q(q) (+ the friction of the measured velocity).
#ifndef ROBOT_DYNAMICS_CONTROL__GRAVITY_COMPENSATION_CONTROLLER_HPP_
#define ROBOT_DYNAMICS_CONTROL__GRAVITY_COMPENSATION_CONTROLLER_HPP_

#include <string>

#include "controller_interface/controller_interface.hpp"
#include "robot_dynamics_control/joint_space_controller.hpp"
// generate_parameter_library puts the header under the package's name (0.7, Humble) or alone (0.3, Jazzy)
#if __has_include("robot_dynamics_control/gravity_compensation_controller_parameters.hpp")
#include "robot_dynamics_control/gravity_compensation_controller_parameters.hpp"
#else
#include "gravity_compensation_controller_parameters.hpp"
#endif

namespace robot_dynamics_control
{

/// effort = rd_gravity_compensation(q, qd, friction_feedforward): the inverse dynamics at rest
/// (Khalil [9.12]'s Q(q)) plus, when friction_feedforward is set, the joint friction (Khalil [7.26])
/// at the measured velocity, its Coulomb sign smoothed by friction_smoothing_velocity; clipped to the
/// effort limits. With gravity_compensated_by_hardware: the friction alone (or zero).
class GravityCompensationController
: public JointSpaceController<
    controller_interface::ControllerInterface, gravity_compensation_controller::ParamListener,
    gravity_compensation_controller::Params>
{
public:
  controller_interface::return_type update(const rclcpp::Time & time, const rclcpp::Duration & period) override;

protected:
  std::string law_name() const override { return "gravity compensation"; }
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__GRAVITY_COMPENSATION_CONTROLLER_HPP_
