#include "robot_dynamics_control/computed_torque_controller.hpp"

#include <algorithm>
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
const char * const kReferenceKinds[3] = {"position", "velocity", "acceleration"};
}  // namespace

bool ComputedTorqueController::apply_gains() noexcept
{
  const bool explicit_gains = !params_.kp.empty() || !params_.kd.empty();
  if (explicit_gains) {
    return core_.to_model_order(params_.kp, kp_) && core_.to_model_order(params_.kd, kd_);
  }
  if (!core_.to_model_order(params_.omega, omega_) || !core_.to_model_order(params_.xi, xi_)) {
    return false;
  }
  for (size_t k = 0; k < kp_.size(); ++k) {  // Khalil [9.26]
    kp_[k] = omega_[k] * omega_[k];
    kd_[k] = 2.0 * xi_[k] * omega_[k];
  }
  return true;
}

std::string ComputedTorqueController::parameter_error() const
{
  return "gains (kp, kd or omega, xi), hold_damping and max_tracking_error: give one value (every joint) or " +
         std::to_string(core_.n()) + " ordered as joints " + format_names(params_.joints);
}

CallbackReturn ComputedTorqueController::configure_law()
{
  const auto n = static_cast<size_t>(core_.n());
  const auto nq = static_cast<size_t>(core_.nq());
  for (auto * v : {&kp_, &kd_, &omega_, &xi_, &qr_, &qdr_, &qddr_, &q0_, &qd0_, &qdd0_, &hold_}) {
    v->assign(nq, 0.0);
  }
  for (auto * v : {&params_.kp, &params_.kd, &params_.omega, &params_.xi}) {
    v->reserve(n);
  }
  if (params_.kp.empty() != params_.kd.empty()) {
    RCLCPP_ERROR(get_node()->get_logger(), "kp and kd: give both, or neither and use omega and xi");
    return CallbackReturn::ERROR;
  }
  if (!apply_gains()) {
    return CallbackReturn::ERROR;
  }
  options_.kp = kp_.data();
  options_.kd = kd_.data();
  options_.position = params_.scheme == "position" ? 1 : 0;
  options_.predictive = 0;
  options_.desired_friction = params_.friction_velocity == "desired" ? 1 : 0;
  options_.smooth = core_.friction_smoothing;

  reference_interfaces_.assign(3 * n, kNaN);
  {
    std::lock_guard<std::mutex> lock(receive_mutex_);
    incoming_ = Trajectory();
    incoming_.nq = core_.n();
    incoming_.sequence = ++received_;
    trajectory_.initRT(incoming_);
  }
  active_ = 0;
  subscribe_reference("~/joint_trajectory", [this](const trajectory_msgs::msg::JointTrajectory & msg) {
    return set_trajectory(msg);
  });
  return CallbackReturn::SUCCESS;
}

std::string ComputedTorqueController::law_name() const
{
  return "computed torque (" + params_.scheme + " scheme, friction at the " + params_.friction_velocity +
         " velocity)";
}

std::vector<hardware_interface::CommandInterface> ComputedTorqueController::on_export_reference_interfaces()
{
  std::vector<hardware_interface::CommandInterface> interfaces;
  const auto & joints = core_.joints();
  const size_t n = joints.size();
  for (size_t kind = 0; kind < 3; ++kind) {
    for (size_t i = 0; i < n; ++i) {
      interfaces.emplace_back(
        get_node()->get_name(), joints[i] + "/" + kReferenceKinds[kind], &reference_interfaces_[kind * n + i]);
    }
  }
  return interfaces;
}

bool ComputedTorqueController::on_set_chained_mode(bool) { return true; }

std::string ComputedTorqueController::set_trajectory(const trajectory_msgs::msg::JointTrajectory & msg)
{
  if (core_.n() == 0) {
    return "the controller is not configured";
  }
  std::lock_guard<std::mutex> lock(receive_mutex_);
  const std::string reason = trajectory_from_message(msg, core_.joints(), core_.index(), core_.nq(), incoming_);
  if (!reason.empty()) {
    return reason;
  }
  const auto nq = static_cast<size_t>(core_.nq());
  std::vector<double> point(nq);
  for (size_t p = 0; p < incoming_.points; ++p) {  // every waypoint within the joints' limits
    for (int k : core_.index()) {
      point[static_cast<size_t>(k)] = incoming_.q[p * nq + static_cast<size_t>(k)];
    }
    const std::string outside = outside_limits(point);
    if (!outside.empty()) {
      return "point " + std::to_string(p) + ": " + outside;
    }
  }
  if (incoming_.stamp > 0.0) {  // as joint_trajectory_controller: a trajectory that ends in the past is refused
    const double now = get_node()->now().seconds();
    const double end = incoming_.stamp + incoming_.t[incoming_.points - 1];
    if (end < now) {
      return "the trajectory ends in the past (at " + std::to_string(end) + " s, " + std::to_string(now - end) +
             " s before now)";
    }
  }
  incoming_.sequence = ++received_;
  trajectory_.writeFromNonRT(incoming_);  // a copy into the buffer's non-real-time side
  return "";
}

void ComputedTorqueController::latch_hold()
{
  for (int k = 0; k < core_.nq(); ++k) {  // within the joints' limits, whatever the state read
    hold_[static_cast<size_t>(k)] = core_.clamp_position(k, core_.q[static_cast<size_t>(k)]);
  }
  qr_ = hold_;
  std::fill(qdr_.begin(), qdr_.end(), 0.0);
  std::fill(qddr_.begin(), qddr_.end(), 0.0);
}

void ComputedTorqueController::activate_reference()
{
  // hold the first valid position until a reference arrives: no trajectory, NaN references
  std::fill(reference_interfaces_.begin(), reference_interfaces_.end(), kNaN);
  {
    std::lock_guard<std::mutex> lock(receive_mutex_);
    incoming_ = Trajectory();
    incoming_.nq = core_.n();
    incoming_.sequence = ++received_;
    trajectory_.writeFromNonRT(incoming_);
  }
}

#if CONTROLLER_INTERFACE_VERSION_MAJOR >= 4
controller_interface::return_type ComputedTorqueController::update_reference_from_subscribers(
  const rclcpp::Time &, const rclcpp::Duration &)
#else
controller_interface::return_type ComputedTorqueController::update_reference_from_subscribers()
#endif
{
  // the trajectory is sampled in update_and_write_commands, which has the time on every distribution
  return controller_interface::return_type::OK;
}

void ComputedTorqueController::sample_subscribed(double now) noexcept
{
  const Trajectory & tr = *trajectory_.readFromRT();
  if (tr.sequence != active_ && tr.points > 0 && tr.stamp > 0.0 && tr.stamp + tr.t[tr.points - 1] < now) {
    return;  // ended in the past while it waited for this tick (the receiver refuses such trajectories)
  }
  if (tr.sequence != active_) {  // a new trajectory starts from the reference of this moment
    active_ = tr.sequence;
    q0_ = qr_;
    qd0_ = qdr_;
    qdd0_ = qddr_;
    start_ = tr.stamp > 0.0 ? tr.stamp : now;
  }
  if (tr.points == 0) {
    qr_ = hold_;
    std::fill(qdr_.begin(), qdr_.end(), 0.0);
    std::fill(qddr_.begin(), qddr_.end(), 0.0);
  } else {
    sample_trajectory(tr, q0_.data(), qd0_.data(), qdd0_.data(), now - start_, qr_.data(), qdr_.data(), qddr_.data());
  }
  const auto & index = core_.index();
  const size_t n = index.size();
  for (size_t i = 0; i < n; ++i) {  // shown on the reference interfaces
    const auto k = static_cast<size_t>(index[i]);
    reference_interfaces_[i] = qr_[k];
    reference_interfaces_[n + i] = qdr_[k];
    reference_interfaces_[2 * n + i] = qddr_[k];
  }
}

void ComputedTorqueController::finish_reference() noexcept
{
  for (int k : core_.others()) {  // not commanded: its own state, w = 0
    const auto j = static_cast<size_t>(k);
    qr_[j] = core_.q[j];
    qdr_[j] = core_.qd[j];
    qddr_[j] = 0.0;
  }
  for (int k : core_.index()) {
    const auto j = static_cast<size_t>(k);
    // the position limits less what the joint needs to stop from its measured speed towards
    // them: the overshoot of a critically damped error equation whose reference stops at once,
    // v / (e omega) with omega = sqrt(Kp) (v at least the velocity limit), and the braking
    // distance speed^2 / (2 a) at the deceleration its effort limit surely gives
    const double speed = std::abs(core_.qd[j]);
    const double v_stop = std::isfinite(core_.velocity_limit[j]) ? std::max(core_.velocity_limit[j], speed) : speed;
    const double lag = kp_[j] > 0.0 ? v_stop / (2.718281828459045 * std::sqrt(kp_[j])) : 0.0;
    const double braking = speed * speed / (2.0 * core_.braking_acceleration[j]);
    const double lo = core_.lower[j] + lag + (core_.qd[j] < 0.0 ? braking : 0.0);
    const double hi = core_.upper[j] - lag - (core_.qd[j] > 0.0 ? braking : 0.0);
    const double p = lo < hi ? std::min(std::max(qr_[j], lo), hi) : core_.clamp_position(k, qr_[j]);
    const double v = core_.clamp_velocity(k, qdr_[j]);
    if (p != qr_[j]) {  // at a position limit: stop there
      qr_[j] = p;
      qdr_[j] = 0.0;
      qddr_[j] = 0.0;
      core_.mark_limited(k);
    } else if (v != qdr_[j]) {
      qdr_[j] = v;
      qddr_[j] = 0.0;
      core_.mark_limited(k);
    }
  }
}

controller_interface::return_type ComputedTorqueController::update_and_write_commands(
  const rclcpp::Time & time, const rclcpp::Duration & period)
{
  refresh_parameters();  // gains changed while running
  options_.smooth = core_.friction_smoothing;
  if (is_in_chained_mode()) {
    const auto & index = core_.index();
    const size_t n = index.size();
    for (size_t i = 0; i < n; ++i) {  // a NaN: not commanded by the controller in front
      const auto k = static_cast<size_t>(index[i]);
      const double p = reference_interfaces_[i], v = reference_interfaces_[n + i], a = reference_interfaces_[2 * n + i];
      qr_[k] = std::isnan(p) ? hold_[k] : p;
      qdr_[k] = std::isnan(v) ? 0.0 : v;
      qddr_[k] = std::isnan(a) ? 0.0 : a;
    }
  } else {
    sample_subscribed(time.seconds());
  }
  return tick(time, period, [this] {
    finish_reference();
    const rd_reference reference{qr_.data(), qdr_.data(), qddr_.data()};
    return rd_computed_torque(
      &core_.model(), &options_, core_.q.data(), core_.qd.data(), &reference, core_.tau.data(), &core_.work());
  });
}

}  // namespace robot_dynamics_control

PLUGINLIB_EXPORT_CLASS(
  robot_dynamics_control::ComputedTorqueController, controller_interface::ChainableControllerInterface)
