// Joint-space computed torque in ros2_control's loop (Khalil 9.4.2), chainable.
#ifndef ROBOT_DYNAMICS_CONTROL__COMPUTED_TORQUE_CONTROLLER_HPP_
#define ROBOT_DYNAMICS_CONTROL__COMPUTED_TORQUE_CONTROLLER_HPP_

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "controller_interface/chainable_controller_interface.hpp"
#include "controller_interface/version.h"
#include "realtime_tools/realtime_buffer.h"
#include "robot_dynamics_control/joint_space_controller.hpp"
#include "robot_dynamics_control/trajectory_sampler.hpp"
#include "trajectory_msgs/msg/joint_trajectory.hpp"
// generate_parameter_library puts the header under the package's name (0.7, Humble) or alone (0.3, Jazzy)
#if __has_include("robot_dynamics_control/computed_torque_controller_parameters.hpp")
#include "robot_dynamics_control/computed_torque_controller_parameters.hpp"
#else
#include "computed_torque_controller_parameters.hpp"
#endif

namespace robot_dynamics_control
{

/// effort = rd_computed_torque: Gamma = A^(q) w + H^(q, qd) by Newton-Euler, w = qdd_r + Kd (qd_r - qd)
/// + Kp (q_r - q) (scheme tracking, Khalil [9.24]) or Kp (q_r - q) - Kd qd (position, [9.29]), the
/// model's friction at the measured or the reference velocity; as robot_dynamics.control.ComputedTorque.
/// Gains: kp and kd, or Kp = omega^2, Kd = 2 xi omega (Khalil [9.26]).
///
/// The reference (q_r, qd_r, qdd_r): chained behind another controller, its reference interfaces
/// <controller>/<joint>/position, .../velocity and .../acceleration (a NaN: the position held at
/// activation, zero velocity and acceleration); e.g. joint_trajectory_controller with
/// command_joints [<controller>/<joint>, ...] and command_interfaces [position, velocity,
/// acceleration]. Otherwise the trajectory_msgs/JointTrajectory of ~/joint_trajectory, sampled by
/// Hermite interpolation from the reference at its arrival (the header stamp's time, or at once when
/// 0; refused when its positions leave the joints' limits or when it ends in the past); before any,
/// the first valid position after activation. Either reference is clamped to the joints' position
/// and velocity limits each cycle (the state's `limited` flag).
///
/// Its efforts go to the hardware's <joint>/effort, or, with command_joints, to the effort
/// reference interfaces of a controller behind it (CollisionMonitorController).
class ComputedTorqueController
: public JointSpaceController<
    controller_interface::ChainableControllerInterface, computed_torque_controller::ParamListener,
    computed_torque_controller::Params>
{
public:
  /// Sets the trajectory to track (what ~/joint_trajectory does). Outside the real-time loop.
  /// Returns "" or the reason the message is rejected (the trajectory is then unchanged).
  std::string set_trajectory(const trajectory_msgs::msg::JointTrajectory & msg);

  /// The reference interfaces in `joints` order: positions, velocities, accelerations (3 n): the
  /// sampled trajectory's, or in chained mode what the controller in front wrote.
  const std::vector<double> & reference() const { return reference_interfaces_; }
  /// The reference the last tick's law used, after the limits, in `joints` order (3 n). Allocates.
  std::vector<double> applied_reference() const
  {
    std::vector<double> out;
    for (const auto * v : {&qr_, &qdr_, &qddr_}) {
      for (int k : core_.index()) {
        out.push_back((*v)[static_cast<size_t>(k)]);
      }
    }
    return out;
  }
  /// The gains in model order.
  const std::vector<double> & kp() const { return kp_; }
  const std::vector<double> & kd() const { return kd_; }

protected:
  /// The gains, the law's options and the reference's buffers; subscribes to ~/joint_trajectory.
  controller_interface::CallbackReturn configure_law() override;
  std::string law_name() const override;
  /// No trajectory, NaN reference interfaces: the hold until a reference arrives.
  void activate_reference() override;
  /// The hold: the first valid position after activation.
  void latch_hold() override;
  const double * reference_position() const override { return qr_.data(); }
  const double * reference_velocity() const override { return qdr_.data(); }
  std::vector<std::pair<std::string, bool>> per_joint_parameters() const override
  {
    return {{"hold_damping", false}, {"max_tracking_error", false}, {"kp", true}, {"kd", true}, {"omega", false},
            {"xi", false}};
  }
  std::vector<std::string> command_joints() const override { return params_.command_joints; }
  std::vector<std::string> read_only_parameters() const override
  {
    auto names = JointSpaceController::read_only_parameters();
    names.insert(names.end(), {"scheme", "friction_velocity", "command_joints"});
    return names;
  }
  std::string parameter_error() const override;
  /// Gains from the parameters into kp_, kd_ (model order); false when a size is wrong.
  bool apply_gains() noexcept override;

  std::vector<hardware_interface::CommandInterface> on_export_reference_interfaces() override;
  bool on_set_chained_mode(bool chained_mode) override;
#if CONTROLLER_INTERFACE_VERSION_MAJOR >= 4
  controller_interface::return_type update_reference_from_subscribers(
    const rclcpp::Time & time, const rclcpp::Duration & period) override;
#else
  controller_interface::return_type update_reference_from_subscribers() override;
#endif
  controller_interface::return_type update_and_write_commands(
    const rclcpp::Time & time, const rclcpp::Duration & period) override;

private:
  /// The reference of the joints not commanded (their measured state, no acceleration) and every
  /// joint's clamped to its limits.
  void finish_reference() noexcept;
  /// Samples the trajectory (or the hold) into qr_, qdr_, qddr_ at `now` [s].
  void sample_subscribed(double now) noexcept;

  rd_computed_torque_options options_{};
  std::vector<double> kp_, kd_, omega_, xi_;
  std::vector<double> qr_, qdr_, qddr_;     // the reference, model order
  std::vector<double> q0_, qd0_, qdd0_;     // where the current trajectory starts from
  std::vector<double> hold_;                // the position at activation
  realtime_tools::RealtimeBuffer<Trajectory> trajectory_;
  std::mutex receive_mutex_;                // between receivers (outside the real-time loop)
  Trajectory incoming_;                     // the conversion's buffer
  uint64_t received_ = 0;                   // sequence of the last trajectory received
  uint64_t active_ = 0;                     // sequence of the trajectory being sampled
  double start_ = 0.0;                      // its start time [s]
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__COMPUTED_TORQUE_CONTROLLER_HPP_
