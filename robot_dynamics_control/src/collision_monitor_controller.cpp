#include "robot_dynamics_control/collision_monitor_controller.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "pluginlib/class_list_macros.hpp"

namespace robot_dynamics_control
{

using controller_interface::CallbackReturn;

namespace
{
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
/// The threshold's fixed part by default, a fraction of each joint's effort limit (1 without one):
/// robot_dynamics.observers.momentum.DEFAULT_THRESHOLD_FRACTION.
constexpr double kThresholdFraction = 0.02;
}  // namespace

bool CollisionMonitorController::apply_gains() noexcept
{
  if (!core_.to_model_order(params_.gain, gain_) || !core_.to_model_order(params_.relative, relative_) ||
      !core_.to_model_order(params_.reflex_gain, reflex_))
  {
    return false;
  }
  if (params_.thresholds.empty()) {
    for (int k : core_.index()) {
      const double limit = core_.limit[static_cast<size_t>(k)];
      fixed_[static_cast<size_t>(k)] = std::isfinite(limit) && limit > 0.0 ? kThresholdFraction * limit : 1.0;
    }
  } else if (!core_.to_model_order(params_.thresholds, fixed_)) {
    return false;
  }
  for (int k : core_.index()) {
    if (!(gain_[static_cast<size_t>(k)] > 0.0)) {
      return false;
    }
  }
  return true;
}

std::string CollisionMonitorController::parameter_error() const
{
  return "gain (> 0), thresholds (or none), relative, reflex_gain, hold_damping and max_tracking_error: give one "
         "value (every joint) or " +
         std::to_string(core_.n()) + " ordered as joints " + format_names(params_.joints);
}

CallbackReturn CollisionMonitorController::configure_law()
{
  const auto n = static_cast<size_t>(core_.n());
  const auto nq = static_cast<size_t>(core_.nq());
  for (auto * v : {&r_, &p_, &z_, &b_, &tau_, &s_, &threshold_, &q_, &relative_, &reflex_, &detected_r_,
                   &detected_threshold_}) {
    v->assign(nq, 0.0);
  }
  // the joints read but not commanded: their torque is not known here, so never a detection
  gain_.assign(nq, 100.0);
  fixed_.assign(nq, std::numeric_limits<double>::max());
  for (auto * v : {&params_.gain, &params_.thresholds, &params_.relative, &params_.reflex_gain}) {
    v->reserve(n);
  }
  if (!apply_gains()) {
    return CallbackReturn::ERROR;
  }
  observer_ = rd_observer{r_.data(), p_.data(), z_.data(), b_.data(), tau_.data(), s_.data(), threshold_.data(),
                          q_.data(), 0.0, 0, 0, -1};
  rd_momentum_observer_reset(&observer_, core_.nq());
  options_.gain = gain_.data();
  options_.threshold = fixed_.data();
  options_.relative = relative_.data();
  options_.gravity = nullptr;  // the law's model: none where the hardware compensates gravity
  options_.friction = params_.friction ? 1 : 0;
  options_.smooth = core_.friction_smoothing;
  options_.hold = 1;  // the command written at a cycle acts until the next one
  reference_interfaces_.assign(n, kNaN);

  auto node = get_node();
  // a late subscriber still gets the last events
  event_publisher_ = node->create_publisher<Event>("~/collision", rclcpp::QoS(10).reliable().transient_local());
  event_rt_ = std::make_unique<LoopPublisher<Event>>(event_publisher_, LoopPublisher<Event>::poll_for(0.0));
  Event & e = event_rt_->msg_;
  e.joint_names = core_.joints();
  e.external_torque.assign(n, 0.0);
  e.threshold.assign(n, 0.0);
  e.joint.reserve(256);
  e.reaction.reserve(16);
  torque_rt_.reset();
  if (params_.external_torque_publish_rate > 0.0) {
    torque_publisher_ = node->create_publisher<Torque>("~/external_torque", rclcpp::SystemDefaultsQoS());
    torque_rt_ = std::make_unique<LoopPublisher<Torque>>(
      torque_publisher_, LoopPublisher<Torque>::poll_for(params_.external_torque_publish_rate));
    torque_rt_->msg_.name = core_.joints();
    torque_rt_->msg_.effort.assign(n, 0.0);
  }
  reset_service_ = node->create_service<robot_dynamics_interfaces::srv::ResetCollision>(
    "~/reset", [this](
                 const std::shared_ptr<robot_dynamics_interfaces::srv::ResetCollision::Request>,
                 std::shared_ptr<robot_dynamics_interfaces::srv::ResetCollision::Response> response) {
      const auto [success, message] = request_reset();
      response->success = success;
      response->message = message;
      RCLCPP_INFO(get_node()->get_logger(), "~/reset: %s", message.c_str());
    });
  detection_timer_ = node->create_wall_timer(std::chrono::milliseconds(50), [this] { log_detection(); });
  latched_ = false;
  latched_flag_ = false;
  collision_joint_ = -1;
  detections_ = 0;
  return CallbackReturn::SUCCESS;
}

std::string CollisionMonitorController::law_name() const
{
  return "collision monitor (momentum observer, reaction " + params_.reaction + ")";
}

std::pair<bool, std::string> CollisionMonitorController::request_reset()
{
  if (!active_.load()) {
    return {false, "the controller is not active"};
  }
  if (!latched_flag_.load()) {
    return {true, "no collision reaction latched"};
  }
  reset_requested_.store(true);
  return {true, "released the collision reaction: the efforts of the controller in front pass through again"};
}

void CollisionMonitorController::activate_reference()
{
  std::fill(reference_interfaces_.begin(), reference_interfaces_.end(), kNaN);
  latched_ = false;
  latched_flag_ = false;
  reset_requested_ = false;
  collision_joint_ = -1;
  event_pending_ = false;
  last_torque_publish_ = -1.0;
  rd_momentum_observer_reset(&observer_, core_.nq());
  active_ = true;
}

std::vector<hardware_interface::CommandInterface> CollisionMonitorController::on_export_reference_interfaces()
{
  std::vector<hardware_interface::CommandInterface> interfaces;
  const auto & joints = core_.joints();
  for (size_t i = 0; i < joints.size(); ++i) {
    interfaces.emplace_back(get_node()->get_name(), joints[i] + "/effort", &reference_interfaces_[i]);
  }
  return interfaces;
}

bool CollisionMonitorController::on_set_chained_mode(bool) { return true; }

#if CONTROLLER_INTERFACE_VERSION_MAJOR >= 4
controller_interface::return_type CollisionMonitorController::update_reference_from_subscribers(
  const rclcpp::Time &, const rclcpp::Duration &)
#else
controller_interface::return_type CollisionMonitorController::update_reference_from_subscribers()
#endif
{
  // no topic of efforts: unchained, the references stay NaN (the stop behaviour)
  return controller_interface::return_type::OK;
}

int CollisionMonitorController::law() noexcept
{
  if (latched_) {
    // the reaction: the hold (gravity of the law's model, joint damping), and the reflex's K_r r
    core_.hold_output();
    if (reflexing_) {
      for (int k : core_.index()) {
        const auto j = static_cast<size_t>(k);
        core_.tau[j] += reflex_[j] * r_[j];
      }
    }
    return RD_OK;
  }
  const auto & index = core_.index();
  for (size_t i = 0; i < index.size(); ++i) {  // a NaN: finish() faults into the stop behaviour
    core_.tau[static_cast<size_t>(index[i])] = reference_interfaces_[i];
    if (std::isnan(reference_interfaces_[i])) {
      core_.mark_missing_reference(index[i]);
    }
  }
  for (int k : core_.others()) {
    core_.tau[static_cast<size_t>(k)] = 0.0;
  }
  return RD_OK;
}

void CollisionMonitorController::observe(const rclcpp::Time & time) noexcept
{
  const double t = time.seconds();
  if (observer_.started && !(t > observer_.t)) {
    return;  // a second update at the same time (the one at activation): nothing elapsed
  }
  options_.smooth = core_.friction_smoothing;
  const int status = rd_momentum_observer_update(
    &core_.model(), &options_, &observer_, t, core_.q.data(), core_.qd.data(), core_.tau.data(), &core_.work());
  if (status != RD_OK) {
    // a non-finite state or effort (the brake request), or a failure: start afresh when it is finite
    rd_momentum_observer_reset(&observer_, core_.nq());
    return;
  }
  if (observer_.collision && !latched_) {
    latched_ = true;
    latched_flag_.store(true);
    reflexing_ = params_.reaction == "reflex";
    collision_joint_ = event_joint_ = observer_.joint;
    ++detections_;
    detected_r_ = r_;  // the same sizes: copies, no allocation
    detected_threshold_ = threshold_;
    detection_time_ = time;
    event_pending_ = true;
    detected_joint_.store(collision_joint_, std::memory_order_relaxed);
    detected_reflex_.store(reflexing_, std::memory_order_relaxed);
    detected_seq_.fetch_add(1, std::memory_order_release);
  }
}

void CollisionMonitorController::publish(const rclcpp::Time & time) noexcept
{
  const auto & index = core_.index();
  if (event_pending_ && event_rt_->trylock()) {
    Event & e = event_rt_->msg_;
    e.header.stamp = detection_time_;
    const auto & name = core_.engine().joint_names()[static_cast<size_t>(event_joint_)];
    e.joint.clear();
    if (name.size() <= e.joint.capacity()) {  // reserved at configuration: no allocation
      e.joint.append(name);
    }
    e.reaction.assign(reflexing_ ? "reflex" : "hold");
    for (size_t i = 0; i < index.size(); ++i) {
      e.external_torque[i] = detected_r_[static_cast<size_t>(index[i])];
      e.threshold[i] = detected_threshold_[static_cast<size_t>(index[i])];
    }
    event_rt_->unlockAndPublish();
    event_pending_ = false;
  }
  if (!torque_rt_) {
    return;
  }
  const double now = time.seconds();
  if (last_torque_publish_ >= 0.0 && now - last_torque_publish_ < 1.0 / params_.external_torque_publish_rate) {
    return;
  }
  if (!torque_rt_->trylock()) {
    return;
  }
  last_torque_publish_ = now;
  Torque & m = torque_rt_->msg_;
  m.header.stamp = time;
  for (size_t i = 0; i < index.size(); ++i) {
    m.effort[i] = r_[static_cast<size_t>(index[i])];
  }
  torque_rt_->unlockAndPublish();
}

void CollisionMonitorController::log_detection()
{
  const uint64_t seq = detected_seq_.load(std::memory_order_acquire);
  if (seq == logged_seq_) {
    return;
  }
  logged_seq_ = seq;
  const int joint = detected_joint_.load(std::memory_order_relaxed);
  RCLCPP_WARN(
    get_node()->get_logger(), "collision detected, isolated to joint '%s': reaction %s until ~/reset",
    joint >= 0 ? core_.engine().joint_names()[static_cast<size_t>(joint)].c_str() : "?",
    detected_reflex_.load(std::memory_order_relaxed) ? "reflex" : "hold");
}

controller_interface::return_type CollisionMonitorController::update_and_write_commands(
  const rclcpp::Time & time, const rclcpp::Duration & period)
{
  refresh_parameters();  // thresholds and gains changed while running
  if (reset_requested_.exchange(false)) {
    latched_ = false;
    latched_flag_.store(false);
    collision_joint_ = -1;
    rd_momentum_observer_reset(&observer_, core_.nq());
  }
  const auto result = tick(time, period, [this] { return law(); });
  if (period.nanoseconds() > 0) {  // not the update at activation, at which nothing elapsed
    observe(time);
  }
  publish(time);
  return result;
}

}  // namespace robot_dynamics_control

PLUGINLIB_EXPORT_CLASS(
  robot_dynamics_control::CollisionMonitorController, controller_interface::ChainableControllerInterface)
