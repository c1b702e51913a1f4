// The lifecycle of the joint-space controllers, written once: the generated parameters, the
// interfaces (<joint>/effort commands; <joint>/position and <joint>/velocity states), the model loaded
// at configuration, the handles bound at activation, zero efforts at deactivation, and one tick of a
// law. Each controller adds its law, what its own parameters mean, and its reference.
#ifndef ROBOT_DYNAMICS_CONTROL__JOINT_SPACE_CONTROLLER_HPP_
#define ROBOT_DYNAMICS_CONTROL__JOINT_SPACE_CONTROLLER_HPP_

#include <exception>
#include <memory>
#include <string>

#include "controller_interface/controller_interface_base.hpp"
#include "rclcpp/rclcpp.hpp"
#include "rclcpp_lifecycle/state.hpp"
#include "robot_dynamics_control/controller_core.hpp"
#include "trajectory_msgs/msg/joint_trajectory.hpp"

namespace robot_dynamics_control
{

/// A joint-space controller on `Base` (controller_interface::ControllerInterface, or
/// ChainableControllerInterface), configured by generate_parameter_library's `ParamListener` and
/// `Params`, whose parameters include joints, robot_description, drivetrain and effort_limits (the
/// meaning JointSpaceCore::configure gives them).
template<typename Base, typename ParamListener, typename Params>
class JointSpaceController : public Base
{
public:
  controller_interface::CallbackReturn on_init() override
  {
    try {
      param_listener_ = std::make_shared<ParamListener>(this->get_node());
      params_ = param_listener_->get_params();
    } catch (const std::exception & e) {
      RCLCPP_ERROR(this->get_node()->get_logger(), "parameters: %s", e.what());
      return controller_interface::CallbackReturn::ERROR;
    }
    return controller_interface::CallbackReturn::SUCCESS;
  }

  controller_interface::InterfaceConfiguration command_interface_configuration() const override
  {
    return {controller_interface::interface_configuration_type::INDIVIDUAL, core_.command_interface_names()};
  }

  controller_interface::InterfaceConfiguration state_interface_configuration() const override
  {
    return {controller_interface::interface_configuration_type::INDIVIDUAL, core_.state_interface_names()};
  }

  /// Reads the parameters, loads the model and matches the joints (JointSpaceCore::configure), then
  /// configure_law(); logs the reason of a failure and returns ERROR.
  controller_interface::CallbackReturn on_configure(const rclcpp_lifecycle::State &) override
  {
    try {
      params_ = param_listener_->get_params();
      core_.configure(
        robot_description_of(*this, params_.robot_description), params_.drivetrain, params_.joints,
        params_.effort_limits);
    } catch (const std::exception & e) {
      RCLCPP_ERROR(this->get_node()->get_logger(), "%s", e.what());
      return controller_interface::CallbackReturn::ERROR;
    }
    if (configure_law() != controller_interface::CallbackReturn::SUCCESS) {
      return controller_interface::CallbackReturn::ERROR;
    }
    RCLCPP_INFO(
      this->get_node()->get_logger(), "%s of '%s' on %d joints", law_name().c_str(),
      core_.engine().robot_name().c_str(), core_.n());
    return controller_interface::CallbackReturn::SUCCESS;
  }

  /// Binds the loaned handles by name, then activate_reference().
  controller_interface::CallbackReturn on_activate(const rclcpp_lifecycle::State &) override
  {
    try {
      core_.bind(this->command_interfaces_, this->state_interfaces_);
    } catch (const std::exception & e) {
      RCLCPP_ERROR(this->get_node()->get_logger(), "%s", e.what());
      return controller_interface::CallbackReturn::ERROR;
    }
    activate_reference();
    return controller_interface::CallbackReturn::SUCCESS;
  }

  /// Zero efforts on every commanded joint.
  controller_interface::CallbackReturn on_deactivate(const rclcpp_lifecycle::State &) override
  {
    for (auto & command : this->command_interfaces_) {
      command.set_value(0.0);
    }
    return controller_interface::CallbackReturn::SUCCESS;
  }

  /// The model, buffers and the last tick's status (TickStatus flags).
  const JointSpaceCore & core() const { return core_; }

protected:
  /// The controller's own configuration, after the model and joints (gains, buffers, its
  /// reference). Logs the reason and returns ERROR when its parameters do not fit the joints.
  virtual controller_interface::CallbackReturn configure_law()
  {
    return controller_interface::CallbackReturn::SUCCESS;
  }
  /// The law, as the configuration's log line names it ("<law_name()> of '<robot>' on <n> joints").
  virtual std::string law_name() const = 0;
  /// At activation, once the handles are bound: where the reference starts (e.g. the position held).
  virtual void activate_reference() {}

  /// Subscribes to trajectory_msgs/JointTrajectory on `topic`: `set(msg)` receives each message
  /// (outside the real-time loop) and returns "" or the reason it is rejected, logged as a warning.
  template<typename Set>
  void subscribe_reference(const std::string & topic, Set set)
  {
    subscription_ = this->get_node()->template create_subscription<trajectory_msgs::msg::JointTrajectory>(
      topic, rclcpp::SystemDefaultsQoS(),
      [this, topic, set](const trajectory_msgs::msg::JointTrajectory::SharedPtr msg) {
        const std::string reason = set(*msg);
        if (!reason.empty()) {
          RCLCPP_WARN(this->get_node()->get_logger(), "%s rejected: %s", topic.c_str(), reason.c_str());
        }
      });
  }

  /// One tick (real-time: no allocation, lock or exception): reads q and qd into the core; when they
  /// are finite, `law()` computes core_.tau and returns its rd_status; then the efforts are written
  /// (the safe output when the state or the law failed; JointSpaceCore::finish).
  template<typename Law>
  controller_interface::return_type tick(Law && law) noexcept
  {
    int status = RD_BAD_INPUT;
    if (core_.read(this->state_interfaces_)) {
      status = law();
    }
    core_.finish(status, this->command_interfaces_);
    return controller_interface::return_type::OK;
  }

  std::shared_ptr<ParamListener> param_listener_;
  Params params_;
  JointSpaceCore core_;
  /// The reference topic's subscription (subscribe_reference), of the controllers that have one.
  rclcpp::Subscription<trajectory_msgs::msg::JointTrajectory>::SharedPtr subscription_;
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__JOINT_SPACE_CONTROLLER_HPP_
