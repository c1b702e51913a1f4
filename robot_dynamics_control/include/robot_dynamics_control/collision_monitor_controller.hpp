// Collision detection in ros2_control's loop: a chainable controller between an effort-commanding
// controller and the hardware, with De Luca's generalized momentum observer of the engine.
#ifndef ROBOT_DYNAMICS_CONTROL__COLLISION_MONITOR_CONTROLLER_HPP_
#define ROBOT_DYNAMICS_CONTROL__COLLISION_MONITOR_CONTROLLER_HPP_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "controller_interface/chainable_controller_interface.hpp"
#include "controller_interface/version.h"
#include "robot_dynamics_control/joint_space_controller.hpp"
#include "robot_dynamics_interfaces/msg/collision_event.hpp"
#include "robot_dynamics_interfaces/srv/reset_collision.hpp"
#include "sensor_msgs/msg/joint_state.hpp"
// generate_parameter_library puts the header under the package's name (0.7, Humble) or alone (0.3, Jazzy)
#if __has_include("robot_dynamics_control/collision_monitor_controller_parameters.hpp")
#include "robot_dynamics_control/collision_monitor_controller_parameters.hpp"
#else
#include "collision_monitor_controller_parameters.hpp"
#endif

namespace robot_dynamics_control
{

/// Passes the efforts of the controller in front (its effort reference interfaces
/// <controller>/<joint>/effort, e.g. ComputedTorqueController with command_joints
/// [<controller>/<joint>, ...]) to the hardware's <joint>/effort, clipped to the effort limits,
/// and runs the engine's momentum observer (rd_momentum_observer_update) on the efforts it writes
/// each cycle: the residual r, the external joint torques through the lag dr/dt = K_O (tau_ext - r),
/// on ~/external_torque (sensor_msgs/JointState, r in effort [N m or N]). A residual over its
/// threshold (thresholds_j + relative_j s_j) is a collision: ~/collision
/// (robot_dynamics_interfaces/msg/CollisionEvent) once, naming the isolated joint (the last one over
/// its threshold), and the reaction of the parameter `reaction` replaces the efforts of the
/// controller in front until ~/reset (robot_dynamics_interfaces/srv/ResetCollision): hold (the
/// gravity torque of the current pose minus hold_damping qd) or reflex (the hold plus reflex_gain
/// times r: the arm yields along the residual), clipped to the effort limits. A NaN reference (no
/// controller in front writes it) is a fault: the stop behaviour, as every controller of the
/// package. With gravity_compensated_by_hardware the hold and reflex leave g(q) out and so does
/// the observer's model, the torque on the arm being the command plus the hardware's g(q).
class CollisionMonitorController
: public JointSpaceController<
    controller_interface::ChainableControllerInterface, collision_monitor_controller::ParamListener,
    collision_monitor_controller::Params>
{
public:
  /// The effort reference interfaces' values in `joints` order (n) [N m or N].
  const std::vector<double> & reference() const { return reference_interfaces_; }
  /// The residual, the estimated external joint torques, model order (nq) [N m or N].
  const std::vector<double> & external_torque() const { return r_; }
  /// The thresholds of the last update, model order (nq) [N m or N].
  const std::vector<double> & threshold() const { return threshold_; }
  /// Whether a collision reaction is latched.
  bool latched() const { return latched_; }
  /// Model index of the joint the latched collision isolated (-1: none).
  int collision_joint() const { return collision_joint_; }
  /// Collisions detected since configuration.
  uint64_t detections() const { return detections_; }
  /// What ~/reset does: the latched reaction released and the observer restarted at the next
  /// update. Any thread; returns what the service answers.
  std::pair<bool, std::string> request_reset();

protected:
  /// The observer's buffers and options, the reference interfaces, the publishers and ~/reset.
  controller_interface::CallbackReturn configure_law() override;
  std::string law_name() const override;
  /// NaN reference interfaces, no reaction latched, the observer restarted.
  void activate_reference() override;
  /// The stop behaviour (JointSpaceController); ~/reset answers that the controller is inactive.
  controller_interface::CallbackReturn on_deactivate(const rclcpp_lifecycle::State & previous) override
  {
    active_ = false;
    return JointSpaceController::on_deactivate(previous);
  }
  std::vector<std::pair<std::string, bool>> per_joint_parameters() const override
  {
    return {{"hold_damping", false}, {"max_tracking_error", false}, {"gain", false}, {"thresholds", true},
            {"relative", false}, {"reflex_gain", false}};
  }
  std::vector<std::string> positive_parameters() const override { return {"gain"}; }
  std::vector<std::string> read_only_parameters() const override
  {
    auto names = JointSpaceController::read_only_parameters();
    names.insert(names.end(), {"friction", "external_torque_publish_rate"});
    return names;
  }
  std::string parameter_error() const override;
  /// gain, thresholds, relative and reflex_gain into model order; false when a size is wrong.
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
  using Event = robot_dynamics_interfaces::msg::CollisionEvent;
  using Torque = sensor_msgs::msg::JointState;
  /// core_.tau: the references passed through, or the latched reaction; RD_OK or RD_BAD_INPUT.
  int law() noexcept;
  /// One observer update on the efforts written this cycle; a detection latches the reaction.
  void observe(const rclcpp::Time & time) noexcept;
  /// ~/external_torque at its rate and a pending ~/collision (real-time: try-locks).
  void publish(const rclcpp::Time & time) noexcept;
  /// The logger (a timer of the node, outside update()): each detection once.
  void log_detection();

  rd_observer_options options_{};
  rd_observer observer_{};
  // the observer's state (model order, nq each) and options
  std::vector<double> r_, p_, z_, b_, tau_, s_, threshold_, q_;
  std::vector<double> gain_, fixed_, relative_, reflex_;
  // the residual and thresholds at the last detection (model order), its cycle and joint
  std::vector<double> detected_r_, detected_threshold_;
  rclcpp::Time detection_time_;
  int event_joint_ = 0;
  bool latched_ = false, reflexing_ = false;
  int collision_joint_ = -1;
  uint64_t detections_ = 0;
  bool event_pending_ = false;
  double last_torque_publish_ = -1.0;
  std::atomic<bool> reset_requested_{false}, latched_flag_{false}, active_{false}, detected_reflex_{false};
  std::atomic<uint64_t> detected_seq_{0};
  std::atomic<int> detected_joint_{-1};
  uint64_t logged_seq_ = 0;
  rclcpp::Publisher<Event>::SharedPtr event_publisher_;
  std::unique_ptr<LoopPublisher<Event>> event_rt_;
  rclcpp::Publisher<Torque>::SharedPtr torque_publisher_;
  std::unique_ptr<LoopPublisher<Torque>> torque_rt_;
  rclcpp::Service<robot_dynamics_interfaces::srv::ResetCollision>::SharedPtr reset_service_;
  rclcpp::TimerBase::SharedPtr detection_timer_;
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__COLLISION_MONITOR_CONTROLLER_HPP_
