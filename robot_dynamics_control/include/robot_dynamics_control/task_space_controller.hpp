// The task-space controllers of ros2_control's loop, written once: one frame's pose held or tracked
// by a compliant law of the engine (rd_compliant_control: Cartesian impedance or operational-space
// control, a posture task in the null space, the wrench and the torque rate saturated), the target
// from ~/target_pose or from a controller in front (reference interfaces), the target published on
// ~/current_target for rviz. Each controller adds its law's gains.
#ifndef ROBOT_DYNAMICS_CONTROL__TASK_SPACE_CONTROLLER_HPP_
#define ROBOT_DYNAMICS_CONTROL__TASK_SPACE_CONTROLLER_HPP_

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "controller_interface/chainable_controller_interface.hpp"
#include "controller_interface/version.h"
#include "geometry_msgs/msg/pose_stamped.hpp"
#include "robot_dynamics_control/joint_space_controller.hpp"
#include "robot_dynamics_control/task_target.hpp"

namespace robot_dynamics_control
{

/// A compliant law of one frame (rd_compliant_control) on the joints' effort interfaces, chainable.
///
/// The target: chained behind another controller, its reference interfaces
/// <controller>/<frame>/position.x ... orientation.w (a quaternion), linear_velocity.x ...
/// angular_velocity.z, base axes (a NaN position or orientation: the hold; a NaN velocity: zero);
/// otherwise the last geometry_msgs/PoseStamped of ~/target_pose (header.frame_id '' or a frame fixed
/// to the base; refused, with a warning, when not finite or not a unit quaternion). Before either, the
/// hold: the frame's pose at the first valid state after activation. The posture of the null-space
/// task: the parameter posture, or the joints at that state.
///
/// What every controller of the package does (JointSpaceController): the stop behaviour on
/// deactivation, on a fault and before the first valid state; efforts clipped to the limits;
/// ~/controller_state; gravity_compensated_by_hardware (the law's gravity left out). The law's
/// torques go to the hardware's <joint>/effort or, with command_joints, to the effort reference
/// interfaces of a controller behind (CollisionMonitorController).
template<typename ParamListener, typename Params>
class TaskSpaceController
: public JointSpaceController<controller_interface::ChainableControllerInterface, ParamListener, Params>
{
  using Base = JointSpaceController<controller_interface::ChainableControllerInterface, ParamListener, Params>;

public:
  /// The target of `msg` (what ~/target_pose does), outside the real-time loop: "" or the reason it
  /// is refused (TaskTarget::set).
  std::string set_target(const geometry_msgs::msg::PoseStamped & msg) { return target_.set(msg); }
  /// The target the last tick's law used.
  const TaskPose & applied_target() const { return applied_; }
  /// What the last tick's law reported (the smallest singular value, the damping of Lambda).
  const rd_compliant_info & info() const { return info_; }
  /// The reference interfaces' values (13, TaskTarget::interface_names() order).
  const std::vector<double> & reference() const { return this->reference_interfaces_; }

protected:
  /// RD_CARTESIAN_IMPEDANCE or RD_OPERATIONAL_SPACE.
  virtual int law() const = 0;
  /// The law's gains from params_ into kp_, kd_ (6 each) and options_.damping_ratio; false when a
  /// size is wrong.
  virtual bool law_gains() noexcept = 0;

  controller_interface::CallbackReturn configure_law() override
  {
    const auto n = static_cast<size_t>(this->core_.n());
    const auto nq = static_cast<size_t>(this->core_.nq());
    try {
      target_.configure(this->core_.engine(), this->params_.frame);
    } catch (const std::exception & e) {
      RCLCPP_ERROR(this->get_node()->get_logger(), "%s", e.what());
      return controller_interface::CallbackReturn::ERROR;
    }
    std::string refused = parameter_refused(rclcpp::Parameter("singular_damping", this->params_.singular_damping));
    refused += parameter_refused(rclcpp::Parameter("singular_threshold", this->params_.singular_threshold));
    if (!refused.empty()) {
      RCLCPP_ERROR(this->get_node()->get_logger(), "%s", refused.c_str());
      return controller_interface::CallbackReturn::ERROR;
    }
    for (auto * v : {&null_stiffness_, &posture_, &tau_prev_, &hold_posture_}) {
      v->assign(nq, 0.0);
    }
    kp_.assign(6, 0.0);
    kd_.assign(6, 0.0);
    for (auto * v : {&this->params_.null_space_stiffness, &this->params_.posture}) {
      v->reserve(n);
    }
    reserve_gains();
    options_ = rd_compliant_options{};
    options_.law = law();
    options_.task = rd_task{target_.frame(), RD_LOCAL_WORLD_ALIGNED, 0, 0.0};
    options_.kp = kp_.data();
    options_.kd = kd_.data();
    options_.null_stiffness = null_stiffness_.data();
    options_.posture = posture_.data();
    velocity_limit_.clear();  // the velocity barrier on the URDF's limits (0, a URDF's unset value: none)
    for (double v : this->core_.velocity_limit) {
      velocity_limit_.push_back(v > 0.0 ? v : std::numeric_limits<double>::infinity());
    }
    options_.velocity = velocity_limit_.data();
    if (!apply_gains()) {
      return controller_interface::CallbackReturn::ERROR;
    }
    this->reference_interfaces_.assign(TaskTarget::interface_names().size(), kNaN);
    target_subscription_ = this->get_node()->template create_subscription<geometry_msgs::msg::PoseStamped>(
      "~/target_pose", rclcpp::SystemDefaultsQoS(), [this](const geometry_msgs::msg::PoseStamped::SharedPtr msg) {
        const std::string reason = target_.set(*msg);
        if (!reason.empty()) {
          RCLCPP_WARN(this->get_node()->get_logger(), "~/target_pose rejected: %s", reason.c_str());
        }
      });
    make_target_publisher();
    return controller_interface::CallbackReturn::SUCCESS;
  }

  /// singular_damping or singular_threshold 0 on an arm of fewer than six joints: the frame's six
  /// task rows are never independent, so Lambda needs the damping at every pose.
  std::string parameter_refused(const rclcpp::Parameter & p) const override
  {
    const std::string & name = p.get_name();
    if ((name == "singular_damping" || name == "singular_threshold") &&
        p.get_type() == rclcpp::ParameterType::PARAMETER_DOUBLE && !(p.as_double() > 0.0) && this->core_.nq() < 6) {
      return name + ": expected > 0 on this arm of " + std::to_string(this->core_.nq()) +
             " joints (the frame's six task rows are dependent at every pose, the task inertia needs the damping)";
    }
    return "";
  }

  /// Reserves what law_gains() may copy into (no allocation while running).
  virtual void reserve_gains() {}

  std::string parameter_error() const override
  {
    return "the law's gains, null_space_stiffness, posture, hold_damping and max_tracking_error: give one value "
           "(every joint) or " + std::to_string(this->core_.n()) + " ordered as joints " +
           format_names(this->params_.joints) + " (posture: one per joint or none); the task gains: six values "
           "(x, y, z, rx, ry, rz)";
  }

  std::vector<std::pair<std::string, bool>> per_joint_parameters() const override
  {
    return {{"hold_damping", false}, {"max_tracking_error", false}, {"null_space_stiffness", false}, {"posture", true}};
  }
  std::vector<std::string> command_joints() const override { return this->params_.command_joints; }
  std::vector<std::string> read_only_parameters() const override
  {
    auto names = Base::read_only_parameters();
    names.insert(names.end(), {"frame", "command_joints"});
    return names;
  }

  /// The gains, the posture task and the limits from params_ into the law's options.
  bool apply_gains() noexcept override
  {
    if (!law_gains() || !this->core_.to_model_order(this->params_.null_space_stiffness, null_stiffness_)) {
      return false;
    }
    if (this->params_.posture.empty()) {
      posture_ = hold_posture_;
    } else if (!this->core_.to_model_order(this->params_.posture, posture_)) {
      return false;
    }
    for (int k : this->core_.index()) {  // the posture, a joint reference, within the position limits
      posture_[static_cast<size_t>(k)] = this->core_.clamp_position(k, posture_[static_cast<size_t>(k)]);
    }
    for (int k : this->core_.others()) {  // not commanded: no posture task on them
      null_stiffness_[static_cast<size_t>(k)] = 0.0;
    }
    const double inf = std::numeric_limits<double>::infinity();
    options_.null_damping_ratio = this->params_.null_space_damping_ratio;
    options_.max_force = this->params_.max_force > 0.0 ? this->params_.max_force : inf;
    options_.max_moment = this->params_.max_moment > 0.0 ? this->params_.max_moment : inf;
    options_.max_torque_rate = this->params_.max_torque_rate > 0.0 ? this->params_.max_torque_rate : inf;
    options_.singular_threshold = this->params_.singular_threshold;
    options_.task.damping = this->params_.singular_damping;
    options_.smooth = this->params_.friction_smoothing_velocity;
    options_.lower = this->core_.lower.data();  // the position barrier on the URDF's position limits
    options_.upper = this->core_.upper.data();
    options_.limit_margin = this->params_.joint_limit_margin;
    options_.limit_frequency = this->params_.joint_limit_frequency;
    return true;
  }

  void activate_reference() override
  {
    std::fill(this->reference_interfaces_.begin(), this->reference_interfaces_.end(), kNaN);
    target_.clear();
    has_prev_ = false;
  }

  /// The hold: the frame's pose at the first valid state; the posture there unless given.
  void latch_hold() override
  {
    hold_ = TaskPose();
    const rd_input state{this->core_.q.data(), this->core_.qd.data(), nullptr, nullptr, nullptr, 0};
    const rd_task task{target_.frame(), RD_LOCAL_WORLD_ALIGNED, 0, 0.0};
    rd_task_space_out out{};
    out.T = hold_.T.data();
    if (rd_task_space(&this->core_.model(), &state, &task, &out, &this->core_.work()) != RD_OK) {
      hold_.T[0] = kNaN;  // no pose: the law refuses it (a law fault, the stop behaviour)
    }
    for (int k = 0; k < this->core_.nq(); ++k) {  // within the limits, whatever the state read
      hold_posture_[static_cast<size_t>(k)] = this->core_.clamp_position(k, this->core_.q[static_cast<size_t>(k)]);
    }
    if (this->params_.posture.empty()) {
      posture_ = hold_posture_;
    } else {
      for (int k : this->core_.others()) {  // the joints not commanded: where they are
        posture_[static_cast<size_t>(k)] = hold_posture_[static_cast<size_t>(k)];
      }
    }
  }

  std::vector<hardware_interface::CommandInterface> on_export_reference_interfaces() override
  {
    std::vector<hardware_interface::CommandInterface> interfaces;
    const auto & names = TaskTarget::interface_names();
    for (size_t i = 0; i < names.size(); ++i) {
      interfaces.emplace_back(
        this->get_node()->get_name(), target_.frame_name() + "/" + names[i], &this->reference_interfaces_[i]);
    }
    return interfaces;
  }
  bool on_set_chained_mode(bool) override { return true; }
#if CONTROLLER_INTERFACE_VERSION_MAJOR >= 4
  controller_interface::return_type update_reference_from_subscribers(
    const rclcpp::Time &, const rclcpp::Duration &) override
#else
  controller_interface::return_type update_reference_from_subscribers() override
#endif
  {
    return controller_interface::return_type::OK;  // the target is read in update_and_write_commands
  }

  controller_interface::return_type update_and_write_commands(
    const rclcpp::Time & time, const rclcpp::Duration & period) override
  {
    this->refresh_parameters();  // gains changed while running
    const bool given = this->is_in_chained_mode() ? TaskTarget::from_interfaces(this->reference_interfaces_.data(), applied_)
                                                  : target_.read(applied_);
    const double dt = period.seconds(), now = time.seconds();
    return this->tick(time, period, [this, given, dt, now] {
      if (!given) {
        applied_ = hold_;
      }
      const rd_compliant_input in{this->core_.q.data(), this->core_.qd.data(), applied_.T.data(), applied_.twist.data(),
                                  kZero6, has_prev_ ? tau_prev_.data() : nullptr, dt};
      const int status = rd_compliant_control(
        &this->core_.model(), &options_, &in, this->core_.tau.data(), &info_, &this->core_.work());
      has_prev_ = status == RD_OK;
      if (has_prev_) {
        tau_prev_ = this->core_.tau;
      }
      publish_target(now);
      return status;
    });
  }

  std::vector<double> kp_, kd_;
  rd_compliant_options options_{};

private:
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  static constexpr double kZero6[6] = {0, 0, 0, 0, 0, 0};

  void make_target_publisher()
  {
    target_publisher_.reset();
    if (this->params_.state_publish_rate > 0.0) {
      target_raw_ = this->get_node()->template create_publisher<geometry_msgs::msg::PoseStamped>(
        "~/current_target", rclcpp::SystemDefaultsQoS());
      target_publisher_ = std::make_unique<LoopPublisher<geometry_msgs::msg::PoseStamped>>(
        target_raw_, LoopPublisher<geometry_msgs::msg::PoseStamped>::poll_for(this->params_.state_publish_rate));
      target_publisher_->msg_.header.frame_id = this->core_.engine().frame_names().empty()
                                                  ? std::string()
                                                  : this->core_.engine().frame_names().front();
    }
    last_target_publish_ = -1.0;
  }

  /// ~/current_target (the pose the law holds, base axes) at state_publish_rate; `now` [s].
  void publish_target(double now) noexcept
  {
    if (!target_publisher_) {
      return;
    }
    if (last_target_publish_ >= 0.0 && now - last_target_publish_ < 1.0 / this->params_.state_publish_rate) {
      return;
    }
    if (!target_publisher_->trylock()) {
      return;
    }
    last_target_publish_ = now;
    auto & m = target_publisher_->msg_;
    m.header.stamp = rclcpp::Time(static_cast<int64_t>(now * 1e9));
    const auto & T = applied_.T;
    m.pose.position.x = T[3], m.pose.position.y = T[7], m.pose.position.z = T[11];
    quaternion_of(T.data(), m.pose.orientation);
    target_publisher_->unlockAndPublish();
  }

  /// The unit quaternion of the rotation in T (4 x 4 row-major), Shepperd's method.
  static void quaternion_of(const double * T, geometry_msgs::msg::Quaternion & q) noexcept
  {
    const double r00 = T[0], r11 = T[5], r22 = T[10], trace = r00 + r11 + r22;
    if (trace > 0.0) {
      const double s = 2.0 * std::sqrt(1.0 + trace);
      q.w = 0.25 * s, q.x = (T[9] - T[6]) / s, q.y = (T[2] - T[8]) / s, q.z = (T[4] - T[1]) / s;
    } else if (r00 > r11 && r00 > r22) {
      const double s = 2.0 * std::sqrt(1.0 + r00 - r11 - r22);
      q.w = (T[9] - T[6]) / s, q.x = 0.25 * s, q.y = (T[1] + T[4]) / s, q.z = (T[2] + T[8]) / s;
    } else if (r11 > r22) {
      const double s = 2.0 * std::sqrt(1.0 + r11 - r00 - r22);
      q.w = (T[2] - T[8]) / s, q.x = (T[1] + T[4]) / s, q.y = 0.25 * s, q.z = (T[6] + T[9]) / s;
    } else {
      const double s = 2.0 * std::sqrt(1.0 + r22 - r00 - r11);
      q.w = (T[4] - T[1]) / s, q.x = (T[2] + T[8]) / s, q.y = (T[6] + T[9]) / s, q.z = 0.25 * s;
    }
  }

  TaskTarget target_;
  TaskPose hold_, applied_;
  rd_compliant_info info_{};
  std::vector<double> null_stiffness_, posture_, hold_posture_, tau_prev_, velocity_limit_;
  bool has_prev_ = false;
  typename rclcpp::Subscription<geometry_msgs::msg::PoseStamped>::SharedPtr target_subscription_;
  typename rclcpp::Publisher<geometry_msgs::msg::PoseStamped>::SharedPtr target_raw_;
  std::unique_ptr<LoopPublisher<geometry_msgs::msg::PoseStamped>> target_publisher_;
  double last_target_publish_ = -1.0;
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__TASK_SPACE_CONTROLLER_HPP_
