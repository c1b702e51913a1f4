// The lifecycle of the joint-space controllers, written once: the generated parameters and the
// checks the parameter server applies to them, the interfaces (<joint>/effort commands;
// <joint>/position and <joint>/velocity states), the model loaded and checked at configuration,
// the stop behaviour at deactivation, the first command written at activation, one tick of a law,
// ~/controller_state and the fault log. Each controller adds its law, what its own parameters
// mean, and its reference.
#ifndef ROBOT_DYNAMICS_CONTROL__JOINT_SPACE_CONTROLLER_HPP_
#define ROBOT_DYNAMICS_CONTROL__JOINT_SPACE_CONTROLLER_HPP_

#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "controller_interface/controller_interface_base.hpp"
#include "rclcpp/rclcpp.hpp"
#include "rclcpp_lifecycle/state.hpp"
#include "robot_dynamics_control/controller_core.hpp"
#include "robot_dynamics_control/controller_parameters.hpp"
#include "robot_dynamics_interfaces/msg/controller_state.hpp"
#include "trajectory_msgs/msg/joint_trajectory.hpp"
#include "robot_dynamics_control/loop_publisher.hpp"

namespace robot_dynamics_control
{

/// A joint-space controller on `Base` (controller_interface::ControllerInterface, or
/// ChainableControllerInterface), configured by generate_parameter_library's `ParamListener` and
/// `Params`, whose parameters include the common ones of every controller (controller_parameters.hpp:
/// joints, robot_model, effort_limits, stop_behaviour, hold_damping,
/// max_tracking_error, gravity_compensated_by_hardware, allow_nonphysical_model,
/// state_publish_rate, friction_smoothing_velocity).
template<typename Base, typename ParamListener, typename Params>
class JointSpaceController : public Base
{
public:
  using StateMsg = robot_dynamics_interfaces::msg::ControllerState;

  /// The parameters, and the parameter server's checks (ParameterChecks): registered after the
  /// generated ones, so they run first and a refused value never reaches them.
  controller_interface::CallbackReturn on_init() override
  {
    try {
      param_listener_ = std::make_shared<ParamListener>(this->get_node());
      params_ = param_listener_->get_params();
    } catch (const std::exception & e) {
      RCLCPP_ERROR(this->get_node()->get_logger(), "parameters: %s", e.what());
      return controller_interface::CallbackReturn::ERROR;
    }
    checks_ = ParameterChecks(
      per_joint_parameters(), read_only_parameters(), positive_parameters(), fixed_size_parameters());
    checks_.record_types(*this->get_node());
    on_set_ = this->get_node()->add_on_set_parameters_callback(
      [this](const std::vector<rclcpp::Parameter> & parameters) {
        auto result = checks_.on_set(parameters, configured_ ? static_cast<size_t>(core_.n()) : 0, configured_);
        for (size_t k = 0; result.successful && configured_ && k < parameters.size(); ++k) {
          result.reason = parameter_refused(parameters[k]);
          result.successful = result.reason.empty();
        }
        return result;
      });
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

  /// Checks every parameter (finite, one value or one per joint), loads and checks the model, matches
  /// the joints (JointSpaceCore::configure), then configure_law(); the state publisher and the fault
  /// log. Logs the reason of a failure and returns ERROR.
  controller_interface::CallbackReturn on_configure(const rclcpp_lifecycle::State &) override
  {
    configured_ = false;
    try {
      params_ = param_listener_->get_params();
      checks_.check_node(*this->get_node(), params_.joints.size());
      CoreConfig config;
      config.robot_model = params_.robot_model;
      config.joints = params_.joints;
      config.command_joints = command_joints();
      config.effort_limits = params_.effort_limits;
      config.allow_nonphysical_model = params_.allow_nonphysical_model;
      config.gravity_compensated_by_hardware = params_.gravity_compensated_by_hardware;
      config.stop = stop_behaviour_of(params_.stop_behaviour);
      core_.configure(config);
    } catch (const std::exception & e) {
      RCLCPP_ERROR(this->get_node()->get_logger(), "%s", e.what());
      return controller_interface::CallbackReturn::ERROR;
    }
    const auto n = static_cast<size_t>(core_.n());
    // a later copy of the parameters (update()) fits in what is reserved here: no allocation
    for (auto * v : {&params_.hold_damping, &params_.max_tracking_error}) {
      v->reserve(n);
    }
    if (!apply_safety() || configure_law() != controller_interface::CallbackReturn::SUCCESS) {
      RCLCPP_ERROR(this->get_node()->get_logger(), "%s", parameter_error().c_str());
      return controller_interface::CallbackReturn::ERROR;
    }
    make_state_publisher();
    configured_ = true;
    RCLCPP_INFO(
      this->get_node()->get_logger(), "%s of '%s' on %d of its %d joints; stop behaviour %s%s", law_name().c_str(),
      core_.engine().robot_name().c_str(), core_.n(), core_.nq(), params_.stop_behaviour.c_str(),
      params_.gravity_compensated_by_hardware ? "; gravity compensated by the hardware" : "");
    return controller_interface::CallbackReturn::SUCCESS;
  }

  controller_interface::CallbackReturn on_cleanup(const rclcpp_lifecycle::State &) override
  {
    configured_ = false;
    log_timer_.reset();
    state_publisher_.reset();
    return controller_interface::CallbackReturn::SUCCESS;
  }

  /// Binds the loaned handles by name, forgets the last state and any fault, activate_reference(),
  /// then computes and writes the first command (no cycle of stale or zero efforts at a switch).
  controller_interface::CallbackReturn on_activate(const rclcpp_lifecycle::State &) override
  {
    try {
      core_.bind(this->command_interfaces_, this->state_interfaces_);
    } catch (const std::exception & e) {
      RCLCPP_ERROR(this->get_node()->get_logger(), "%s", e.what());
      return controller_interface::CallbackReturn::ERROR;
    }
    core_.reset();
    hold_latched_ = false;
    last_publish_ = -1.0;
    activate_reference();
    this->update(this->get_node()->now(), rclcpp::Duration(0, 0));
    return controller_interface::CallbackReturn::SUCCESS;
  }

  /// The stop behaviour: hold writes the gravity torque of the pose at this moment (nothing updates
  /// the command afterwards), zero writes zero, brake NaN.
  controller_interface::CallbackReturn on_deactivate(const rclcpp_lifecycle::State &) override
  {
    if (core_.n() > 0 && this->command_interfaces_.size() == static_cast<size_t>(core_.n())) {
      core_.read(this->state_interfaces_);
      core_.stop(this->command_interfaces_, false);
    }
    return controller_interface::CallbackReturn::SUCCESS;
  }

  /// The model, buffers and the last tick's status (TickStatus flags).
  const JointSpaceCore & core() const { return core_; }

protected:
  /// The controller's own configuration, after the model and joints (gains, buffers, its
  /// reference). Returns ERROR when its parameters do not fit the joints (parameter_error() says why).
  virtual controller_interface::CallbackReturn configure_law()
  {
    return controller_interface::CallbackReturn::SUCCESS;
  }
  /// The law, as the configuration's log line names it ("<law_name()> of '<robot>' on <n> joints").
  virtual std::string law_name() const = 0;
  /// At activation, once the handles are bound and the state read: where the reference starts.
  virtual void activate_reference() {}
  /// At the first valid state after activation (never a NaN one): the pose to hold until a
  /// reference arrives is core_.q.
  virtual void latch_hold() {}
  /// The reference position and velocity of this tick in model order (nq), or nullptr (none: no
  /// tracking check, NaN on the state topic).
  virtual const double * reference_position() const { return nullptr; }
  virtual const double * reference_velocity() const { return nullptr; }
  /// The parameters given per joint (one value or one per joint) and those that may also be empty.
  virtual std::vector<std::pair<std::string, bool>> per_joint_parameters() const
  {
    return {{"hold_damping", false}, {"max_tracking_error", false}};
  }
  /// "" or why the configured controller refuses the new value of `parameter` (beyond
  /// ParameterChecks: what depends on the model, e.g. the task-space controllers' singular_damping).
  virtual std::string parameter_refused(const rclcpp::Parameter &) const { return ""; }
  /// The number arrays whose values must be > 0.
  virtual std::vector<std::string> positive_parameters() const { return {}; }
  /// (name, count): the number arrays of exactly count values or none.
  virtual std::vector<std::pair<std::string, size_t>> fixed_size_parameters() const { return {}; }
  /// The names of the effort command interfaces, <name>/effort, one per joint, or empty: the
  /// joints' own (JointSpaceCore's CoreConfig::command_joints).
  virtual std::vector<std::string> command_joints() const { return {}; }
  /// The parameters fixed once configured.
  virtual std::vector<std::string> read_only_parameters() const
  {
    return {"joints", "robot_model", "effort_limits", "stop_behaviour",
            "gravity_compensated_by_hardware", "allow_nonphysical_model", "state_publish_rate"};
  }
  /// Why the parameters do not fit the joints (configure_law's ERROR).
  virtual std::string parameter_error() const
  {
    return "hold_damping and max_tracking_error: give one value (every joint) or " + std::to_string(core_.n()) +
           " ordered as joints " + format_names(params_.joints);
  }

  /// The safety parameters into the core (model order); false when a size is wrong.
  bool apply_safety() noexcept
  {
    core_.friction_smoothing = params_.friction_smoothing_velocity;
    return core_.to_model_order(params_.hold_damping, core_.hold_damping) &&
           core_.to_model_order(params_.max_tracking_error, core_.max_tracking_error);
  }

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

  /// "" when every position of `point` (model order, nq) lies within the joints' limits, else the
  /// reason naming the first joint outside and its limits.
  std::string outside_limits(const std::vector<double> & position) const
  {
    for (int k : core_.index()) {
      const auto j = static_cast<size_t>(k);
      if (position[j] < core_.lower[j] || position[j] > core_.upper[j]) {
        char text[160];
        std::snprintf(
          text, sizeof text, "a position of %.6g is outside the limits [%.6g, %.6g] of joint ", position[j],
          core_.lower[j], core_.upper[j]);
        return text + ("'" + core_.engine().joint_names()[j] + "'");
      }
    }
    return "";
  }

  /// Gains and safety parameters changed while running: a copy into the same-sized Params (the
  /// parameter checks keep every size within what configure reserved), then into the core. Only a
  /// new stamp is applied: try_get_params is true whenever it takes the listener's lock, changed or
  /// not, so the gains were applied again on every tick.
  void refresh_parameters() noexcept
  {
    const rclcpp::Time before = params_.__stamp;
    if (param_listener_->try_get_params(params_) && params_.__stamp != before) {
      apply_safety();
      apply_gains();
    }
  }
  /// The gains from params_ into the law's buffers (model order); false when a size is wrong.
  virtual bool apply_gains() noexcept { return true; }

  /// One tick of `period` (real-time: no allocation, lock or exception): reads q and qd into the
  /// core; when they are finite, latches the hold at the first valid state, and `law()` computes
  /// core_.tau and returns its rd_status; then the efforts are written (the stop behaviour's when the
  /// state, the law or the tracking failed; JointSpaceCore::finish), and the state published at its
  /// rate.
  template<typename Law>
  controller_interface::return_type tick(
    const rclcpp::Time & time, const rclcpp::Duration & period, Law && law) noexcept
  {
    if (period.seconds() > 0.0) {
      core_.period = period.seconds();  // the hold's damping cap
    }
    int status = RD_BAD_INPUT;
    if (core_.read(this->state_interfaces_)) {
      if (!hold_latched_) {
        latch_hold();
        hold_latched_ = true;
      }
      status = law();
    }
    core_.finish(status, hold_latched_ ? reference_position() : nullptr, this->command_interfaces_);
    note_events();
    publish_state(time);
    return controller_interface::return_type::OK;
  }

  std::shared_ptr<ParamListener> param_listener_;
  Params params_;
  JointSpaceCore core_;
  /// The reference topic's subscription (subscribe_reference), of the controllers that have one.
  rclcpp::Subscription<trajectory_msgs::msg::JointTrajectory>::SharedPtr subscription_;

private:
  void make_state_publisher()
  {
    const auto n = static_cast<size_t>(core_.n());
    state_publisher_.reset();
    if (params_.state_publish_rate > 0.0) {
      publisher_ = this->get_node()->template create_publisher<StateMsg>("~/controller_state", rclcpp::SystemDefaultsQoS());
      state_publisher_ = std::make_unique<LoopPublisher<StateMsg>>(
        publisher_, LoopPublisher<StateMsg>::poll_for(params_.state_publish_rate));
      StateMsg & m = state_publisher_->msg_;
      m.joint_names = core_.joints();
      for (auto * v : {&m.reference_positions, &m.reference_velocities, &m.feedback_positions, &m.feedback_velocities,
                       &m.error_positions, &m.effort}) {
        v->assign(n, 0.0);
      }
      m.fault_reason.reserve(256);
    }
    log_timer_ = this->get_node()->create_wall_timer(std::chrono::milliseconds(100), [this] { log_events(); });
  }

  /// After each tick: what the logger reports (outside update()): a new fault, a clamped reference.
  void note_events() noexcept
  {
    if (core_.fault_kind() != Fault::none && core_.fault_count() != fault_noted_) {
      fault_noted_ = core_.fault_count();
      fault_kind_.store(static_cast<int>(core_.fault_kind()), std::memory_order_relaxed);
      fault_joint_.store(core_.fault_joint(), std::memory_order_relaxed);
      fault_value_.store(core_.fault_value(), std::memory_order_relaxed);
      fault_limit_.store(core_.fault_limit(), std::memory_order_relaxed);
      fault_seq_.fetch_add(1, std::memory_order_release);
    }
    const int limited = core_.limited_joint();
    if (limited >= 0 && !limiting_) {  // the start of a clamping
      limited_joint_.store(limited, std::memory_order_relaxed);
      limited_seq_.fetch_add(1, std::memory_order_release);
    }
    limiting_ = limited >= 0;
  }

  /// The logger (a timer of the controller's node, outside the real-time loop): each fault once.
  void log_events()
  {
    const uint64_t seq = fault_seq_.load(std::memory_order_acquire);
    if (seq != fault_logged_) {
      fault_logged_ = seq;
      const int joint = fault_joint_.load(std::memory_order_relaxed);
      RCLCPP_ERROR(
        this->get_node()->get_logger(), "fault: %s",
        fault_reason(
          static_cast<Fault>(fault_kind_.load(std::memory_order_relaxed)),
          joint >= 0 ? core_.engine().joint_names()[static_cast<size_t>(joint)] : std::string(),
          fault_value_.load(std::memory_order_relaxed), fault_limit_.load(std::memory_order_relaxed))
          .c_str());
    }
    const uint64_t limited = limited_seq_.load(std::memory_order_acquire);
    if (limited != limited_logged_) {
      limited_logged_ = limited;
      const auto k = static_cast<size_t>(limited_joint_.load(std::memory_order_relaxed));
      RCLCPP_WARN(
        this->get_node()->get_logger(),
        "the reference of joint '%s' is clamped to its limits (position [%g, %g], velocity %g)",
        core_.engine().joint_names()[k].c_str(), core_.lower[k], core_.upper[k], core_.velocity_limit[k]);
    }
  }

  /// ~/controller_state at state_publish_rate, and at once where time went back (real-time: the
  /// LoopPublisher's slot, atomic operations only; the message's sizes were set at configuration).
  void publish_state(const rclcpp::Time & time) noexcept
  {
    if (!state_publisher_) {
      return;
    }
    const double now = time.seconds();  // a clock gone back (a simulation restarted) publishes again
    if (last_publish_ >= 0.0 && now >= last_publish_ && now - last_publish_ < 1.0 / params_.state_publish_rate) {
      return;
    }
    if (!state_publisher_->trylock()) {
      return;
    }
    last_publish_ = now;
    StateMsg & m = state_publisher_->msg_;
    m.header.stamp = time;
    const double * qr = reference_position();
    const double * qdr = reference_velocity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const auto & index = core_.index();
    for (size_t i = 0; i < index.size(); ++i) {
      const auto k = static_cast<size_t>(index[i]);
      m.reference_positions[i] = qr ? qr[k] : nan;
      m.reference_velocities[i] = qdr ? qdr[k] : nan;
      m.feedback_positions[i] = core_.q[k];
      m.feedback_velocities[i] = core_.qd[k];
      m.error_positions[i] = qr ? qr[k] - core_.q[k] : nan;
      m.effort[i] = core_.tau[k];
    }
    const int status = core_.status();
    m.saturated = (status & TICK_SATURATED) != 0;
    m.limited = (status & TICK_LIMITED) != 0;
    m.holding = (status & TICK_HOLDING) != 0;
    m.fault = core_.fault_kind() != Fault::none;
    m.fault_reason.clear();  // capacity reserved: no allocation while the text fits
    if (m.fault) {
      static const char * const what[] = {
        "", "the measured state is not finite", "the law gave no finite effort",
        "tracking error above max_tracking_error", "no reference"};
      m.fault_reason.append(what[static_cast<int>(core_.fault_kind())]);
      if (core_.fault_joint() >= 0) {
        const auto & name = core_.engine().joint_names()[static_cast<size_t>(core_.fault_joint())];
        if (name.size() + m.fault_reason.size() + 10 <= m.fault_reason.capacity()) {
          m.fault_reason.append(" (joint '").append(name).append("')");
        }
      }
    }
    state_publisher_->unlockAndPublish();
  }

  ParameterChecks checks_;
  rclcpp::node_interfaces::OnSetParametersCallbackHandle::SharedPtr on_set_;
  std::atomic<bool> configured_{false};
  bool hold_latched_ = false;
  typename rclcpp::Publisher<StateMsg>::SharedPtr publisher_;
  std::unique_ptr<LoopPublisher<StateMsg>> state_publisher_;
  double last_publish_ = -1.0;
  rclcpp::TimerBase::SharedPtr log_timer_;
  uint64_t fault_noted_ = 0, fault_logged_ = 0, limited_logged_ = 0;
  bool limiting_ = false;
  std::atomic<uint64_t> fault_seq_{0}, limited_seq_{0};
  std::atomic<int> fault_kind_{0}, fault_joint_{-1}, limited_joint_{-1};
  std::atomic<double> fault_value_{0.0}, fault_limit_{0.0};
};

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__JOINT_SPACE_CONTROLLER_HPP_
